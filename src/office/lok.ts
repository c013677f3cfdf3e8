/**
 * A minimal binding of LibreOfficeKit (LOK) through koffi: enough to load a document and save it as PDF.
 * Only the office worker process imports this module; LOK is not thread-safe and
 * `libreofficekit_hook_2` can be called once per process, so one process holds exactly one instance.
 *
 * Struct layouts follow LibreOffice's public include/LibreOfficeKit/LibreOfficeKit.h (stable prefix since
 * 6.0): both class structs start with `size_t nSize` followed by function pointers, so slot i of the
 * table is at byte offset 8·i on a 64-bit build.
 */
import koffi from 'koffi';

export const DEFAULT_INSTALL_PATH = '/usr/lib/libreoffice/program';

// LibreOfficeKitClass slots.
const KIT_GET_ERROR = 3;
const KIT_LOAD_WITH_OPTIONS = 4;
const KIT_FREE_ERROR = 5;
const KIT_GET_VERSION_INFO = 10;
// LibreOfficeKitDocumentClass slots.
const DOC_DESTROY = 1;
const DOC_SAVE_AS = 2;

const PTR = 8;

const GetErrorFn = koffi.proto('void* lok_get_error_fn(void*)');
const FreeErrorFn = koffi.proto('void lok_free_error_fn(void*)');
const LoadWithOptionsFn = koffi.proto('void* lok_load_with_options_fn(void*, const char*, const char*)');
const VersionInfoFn = koffi.proto('void* lok_version_info_fn(void*)');
const DestroyFn = koffi.proto('void lok_destroy_fn(void*)');
const SaveAsFn = koffi.proto('int lok_save_as_fn(void*, const char*, const char*, const char*)');

type Pointer = unknown;

/** The function pointer in slot `slot` of the class table that `object->pClass` points to. */
function slotOf(object: Pointer, slot: number, nSize: number): Pointer {
  if (slot * PTR >= nSize) throw new Error(`LibreOfficeKit table too small for slot ${slot}`);
  const table = koffi.decode(object, 'void*');
  return koffi.decode(table, slot * PTR, 'void*');
}

function classSize(object: Pointer): number {
  const table = koffi.decode(object, 'void*');
  return Number(koffi.decode(table, 'size_t'));
}

export class LokDocument {
  private readonly nSize: number;
  private destroyed = false;

  constructor(private readonly handle: Pointer) {
    this.nSize = classSize(handle);
  }

  /** Writes the document to `fileUrl` in `format` (e.g. 'pdf'); returns false when LibreOffice refused. */
  saveAs(fileUrl: string, format: string, filterOptions: string): boolean {
    const r = koffi.call(slotOf(this.handle, DOC_SAVE_AS, this.nSize), SaveAsFn, this.handle, fileUrl, format, filterOptions) as number;
    return r !== 0;
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    koffi.call(slotOf(this.handle, DOC_DESTROY, this.nSize), DestroyFn, this.handle);
  }
}

export class LibreOfficeKit {
  private readonly nSize: number;

  private constructor(private readonly handle: Pointer) {
    this.nSize = classSize(handle);
  }

  /**
   * Boots LibreOffice inside this process. `profileUrl` is a file:// URL of a private user profile
   * directory (its registrymodifications.xcu carries the security settings).
   */
  static init(installPath: string, profileUrl: string): LibreOfficeKit {
    const lib = koffi.load(`${installPath}/libmergedlo.so`);
    const hook = lib.func('void* libreofficekit_hook_2(const char*, const char*)');
    const handle = hook(installPath, profileUrl) as Pointer;
    if (!handle) throw new Error('libreofficekit_hook_2 returned NULL');
    return new LibreOfficeKit(handle);
  }

  versionInfo(): string {
    return this.takeString(koffi.call(slotOf(this.handle, KIT_GET_VERSION_INFO, this.nSize), VersionInfoFn, this.handle)) ?? '';
  }

  /** Loads a document; throws with LibreOffice's error text (which may name the file: never log it as is). */
  load(fileUrl: string, options: string): LokDocument {
    const doc = koffi.call(slotOf(this.handle, KIT_LOAD_WITH_OPTIONS, this.nSize), LoadWithOptionsFn, this.handle, fileUrl, options);
    if (!doc) throw new Error(this.lastError() || 'LibreOffice could not load the document');
    return new LokDocument(doc);
  }

  lastError(): string {
    return this.takeString(koffi.call(slotOf(this.handle, KIT_GET_ERROR, this.nSize), GetErrorFn, this.handle)) ?? '';
  }

  /** Reads a char* LibreOffice allocated and releases it with freeError (LOK's documented free). */
  private takeString(p: Pointer): string | undefined {
    if (!p) return undefined;
    const s = koffi.decode(p, 'char', -1) as string;
    koffi.call(slotOf(this.handle, KIT_FREE_ERROR, this.nSize), FreeErrorFn, p);
    return s;
  }
}
