/** Bookmarks: the targets of internal links (#id), named after the element id they stand for. */

/** Word bookmark names: ≤ 40 characters, no spaces; a stable hash suffix keeps long ids distinct. */
export function bookmarkName(id: string): string {
  let name = id.replace(/[^\p{L}\p{N}_]/gu, '_');
  if (!/^\p{L}/u.test(name)) name = `_${name}`;
  if (name.length > 40) {
    let h = 0;
    for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) | 0;
    name = name.slice(0, 31) + '_' + (h >>> 0).toString(16).padStart(8, '0');
  }
  return name;
}
