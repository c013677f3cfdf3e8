/**
 * The relationships a converted body adds to its part (hyperlinks, images), and hyperlink targets: external
 * links by relationship id (one per distinct URL), internal ones by bookmark name.
 */
import { bookmarkName } from './bookmarks.js';
import { xmlAttr } from './escape.js';

export interface Relationship {
  id: string;
  type: 'hyperlink' | 'image';
  target: string;
  external: boolean;
}

// Schemes that run or embed something, or reach local files: never a link target.
const UNSAFE_SCHEME = /^\s*(javascript|vbscript|data|file):/i;
const MAX_HREF_CHARS = 2000;

export class Relationships {
  readonly list: Relationship[] = [];
  private readonly links = new Map<string, string>();
  private next = 1;

  /** `prefix`: ids are `${prefix}${n}`; they must not collide with the host part's own. */
  constructor(private readonly prefix: string) {}

  newId(): string {
    return `${this.prefix}${this.next++}`;
  }

  /**
   * The w:hyperlink attributes for an href (r:id="" or w:anchor=""), or undefined when it is no link. A title
   * becomes the link's w:tooltip (what Word shows on hover; DOCX readers take it back as the title).
   */
  hyperlink(href: string, title?: string): string | undefined {
    const tip = title ? ` w:tooltip="${xmlAttr(title.slice(0, 255))}"` : '';
    if (!href) return undefined;
    if (href.startsWith('#')) {
      if (href.length < 2) return undefined;
      return `w:anchor="${xmlAttr(bookmarkName(decodeURIComponentSafe(href.slice(1))))}" w:history="1"${tip}`;
    }
    // Any other scheme is a link target (irc:, custom app schemes …).
    if (UNSAFE_SCHEME.test(href) || href.length > MAX_HREF_CHARS) return undefined;
    let id = this.links.get(href);
    if (!id) {
      id = this.newId();
      this.links.set(href, id);
      this.list.push({ id, type: 'hyperlink', target: href, external: true });
    }
    return `r:id="${id}" w:history="1"${tip}`;
  }

  /** A relationship to a media part (target relative to word/, e.g. media/image1.png). */
  image(target: string): string {
    const id = this.newId();
    this.list.push({ id, type: 'image', target, external: false });
    return id;
  }
}

export function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
