/**
 * The Folio playground: key (enter or register), convert with a PDF preview, fill a template through a form
 * generated from its fields, sign with the audit page shown, verify with a colour-coded report. Every call
 * goes through @folio/client; every DOCX the page opens goes through `Folio.open`, which sends the
 * document-open telemetry event like any integration.
 */
import { Folio, FolioClient, fromBase64, type AnnotateField, type TemplateField, type VerifyResponse } from '@folio/client';
import { renderPdf } from './pdf.js';

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing`);
  return el as T;
};
const el = <K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...children: Array<Node | string>) => {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
};

const KEY_STORAGE = 'folio.playground.apiKey';
const INGEST_STORAGE = 'folio.playground.ingestUrl';
const origin = location.origin;
let apiKey = sessionStorage.getItem(KEY_STORAGE) ?? '';
const anon = new FolioClient({ baseUrl: origin, retry: { maxAttempts: 2 } });
const client = () => new FolioClient({ baseUrl: origin, apiKey: apiKey || undefined, retry: { maxAttempts: 3, maxDelayMs: 5000 } });

// ---- errors: code, message and request id, always ---------------------------------------------------------

function showError(id: string, e: unknown): void {
  const box = $(id);
  const err = e as { code?: string; message?: string; requestId?: string; status?: number; details?: Array<{ field: string; issue: string }> };
  box.replaceChildren(
    el('strong', { className: 'error-code' }, err.code ?? (e instanceof Error ? e.name : 'ERROR')),
    err.status ? ` (HTTP ${err.status})` : '',
    ': ',
    el('span', { className: 'error-message' }, err.message ?? String(e)),
    el('br'),
    'Request id: ',
    el('code', { className: 'error-request-id' }, err.requestId ?? 'none (nothing was sent)'),
    ...(err.details?.length ? [el('ul', {}, ...err.details.map((d) => el('li', {}, `${d.field}: ${d.issue}`)))] : []),
  );
  box.hidden = false;
}
function clearError(id: string): void {
  $(id).hidden = true;
  $(id).replaceChildren();
}
/**
 * Runs one action of a section: status line, error box, and the button disabled meanwhile. Every failure of
 * `work` is caught and shown, so it never rejects: the click listeners drop its promise with `void`.
 */
async function action(section: string, button: HTMLButtonElement | null, work: () => Promise<void>): Promise<void> {
  clearError(`${section}-error`);
  $(`${section}-status`).textContent = 'Working…';
  if (button) button.disabled = true;
  try {
    await work();
  } catch (e) {
    $(`${section}-status`).textContent = 'Failed.';
    showError(`${section}-error`, e);
  } finally {
    if (button) button.disabled = false;
  }
}
function needKey(): void {
  if (!apiKey) throw Object.assign(new Error('Enter an API key or register one first (section 1).'), { code: 'NO_API_KEY' });
}

// ---- downloads ------------------------------------------------------------------------------------------------

const urls = new Map<string, string>();
function offerDownload(section: string, bytes: Uint8Array, type: string, filename: string): void {
  const old = urls.get(section);
  if (old) URL.revokeObjectURL(old);
  const url = URL.createObjectURL(new Blob([bytes as BlobPart], { type }));
  urls.set(section, url);
  const p = $(`${section}-result`);
  p.replaceChildren(
    'Done: ',
    el('a', { href: url, download: filename, id: `${section}-download` }, `Download ${filename}`),
    ` (${bytes.length.toLocaleString()} bytes)`,
  );
  p.hidden = false;
}
const stem = (name: string) => name.replace(/\.[^.]+$/, '') || 'document';
const fileOf = (id: string): File => {
  const f = $<HTMLInputElement>(id).files?.[0];
  if (!f) throw Object.assign(new Error('Choose or drop a file first.'), { code: 'NO_FILE' });
  return f;
};

// Drag and drop onto every .drop label.
for (const zone of document.querySelectorAll<HTMLLabelElement>('label.drop')) {
  const input = zone.querySelector('input')!;
  zone.addEventListener('dragover', (e) => {
    e.preventDefault();
    zone.classList.add('over');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('over');
    if (e.dataTransfer?.files.length) input.files = e.dataTransfer.files;
  });
}

// ---- telemetry: Folio.open for every DOCX the page opens ----------------------------------------------------

let folio: Folio | undefined;
function configureTelemetry(endpoint: string): void {
  const note = $('telemetry-note');
  if (!endpoint) {
    folio = undefined;
    note.textContent =
      'Telemetry is off: no ingest endpoint is configured for this page (set PLAYGROUND_INGEST_URL on the server, or enter one above).';
    return;
  }
  folio = new Folio({ telemetry: { enabled: true, endpoint, metadata: { app: 'folio-playground' } } });
  note.textContent = `Each DOCX this page opens sends one document-open event to ${endpoint}.`;
}
async function openForTelemetry(file: File): Promise<void> {
  if (!folio || !/\.(docx|dotx)$/i.test(file.name)) return;
  try {
    const doc = await folio.open(file);
    document.body.dataset.lastDocumentId = doc.documentId;
  } catch {
    /* not a readable DOCX: the API call will say so */
  }
}
const ingestInput = $<HTMLInputElement>('ingest-url');
ingestInput.addEventListener('change', () => {
  sessionStorage.setItem(INGEST_STORAGE, ingestInput.value.trim());
  configureTelemetry(ingestInput.value.trim());
});
void (async () => {
  let configured = sessionStorage.getItem(INGEST_STORAGE) ?? '';
  if (!configured) {
    try {
      const r = await fetch('/playground/config.json');
      if (r.ok) configured = ((await r.json()) as { ingestUrl?: string | null }).ingestUrl ?? '';
    } catch {
      /* served without the config route */
    }
  }
  if (!configured) {
    // The same origin's ingest, when this server also serves it.
    const probe = await fetch('/v1/collect', { method: 'OPTIONS' }).catch(() => undefined);
    if (probe && probe.status < 400) configured = `${origin}/v1/collect`;
  }
  ingestInput.value = configured;
  configureTelemetry(configured);
})();

// ---- 1. key ---------------------------------------------------------------------------------------------------

function setKey(key: string, how: string): void {
  apiKey = key;
  sessionStorage.setItem(KEY_STORAGE, key);
  $<HTMLInputElement>('api-key').value = key;
  $('key-status').textContent = key ? `Using ${key.slice(0, 14)}… (${how}).` : 'No key yet: enter one, or register below.';
}
if (apiKey) setKey(apiKey, 'kept for this tab');
$('key-use').addEventListener('click', () => setKey($<HTMLInputElement>('api-key').value.trim(), 'entered'));
$('reg-send').addEventListener(
  'click',
  (e) =>
    void action('reg', e.currentTarget as HTMLButtonElement, async () => {
      const r = await anon.register($<HTMLInputElement>('reg-email').value.trim());
      $('reg-status').textContent = `${r.message} The code is valid for ${Math.round(r.expiresInSeconds / 60)} minutes.`;
    }),
);
$('reg-verify').addEventListener(
  'click',
  (e) =>
    void action('reg', e.currentTarget as HTMLButtonElement, async () => {
      const r = await anon.verifyEmail($<HTMLInputElement>('reg-email').value.trim(), $<HTMLInputElement>('reg-code').value.trim());
      $('new-key-value').textContent = r.apiKey;
      $('new-key').hidden = false;
      $('reg-status').textContent = `Key ${r.keyId} created.`;
      setKey(r.apiKey, 'registered');
    }),
);

// ---- 2. convert -----------------------------------------------------------------------------------------------

$('convert-go').addEventListener(
  'click',
  (e) =>
    void action('convert', e.currentTarget as HTMLButtonElement, async () => {
      needKey();
      const file = fileOf('convert-file');
      const to = $<HTMLSelectElement>('convert-to').value as 'pdf' | 'docx';
      $('convert-result').hidden = true;
      $('convert-preview').replaceChildren();
      await openForTelemetry(file);
      const out = await client().convert(file, { to, filename: file.name });
      const name = out.filename ?? `${stem(file.name)}.${to}`;
      offerDownload('convert', out.bytes, out.contentType, name);
      if (to === 'pdf') {
        const pages = await renderPdf($('convert-preview'), out.bytes, { count: 2, label: name });
        $('convert-status').textContent =
          `Converted ${file.name} to ${name}: ${pages} page${pages === 1 ? '' : 's'} (preview of the first ${Math.min(2, pages)} below).`;
      } else {
        $('convert-status').textContent = `Converted ${file.name} to ${name}.`;
      }
    }),
);

// ---- 3. template ----------------------------------------------------------------------------------------------

interface FormField {
  field: TemplateField;
  input: HTMLInputElement | HTMLTextAreaElement;
  type: AnnotateField['type'];
}
let formFields: FormField[] = [];

const ANNOTATE_TYPES = new Set(['text', 'image', 'signature', 'table', 'checkbox', 'date', 'html', 'link']);
function inputFor(type: string, id: string): HTMLInputElement | HTMLTextAreaElement {
  if (type === 'html' || type === 'table') {
    const area = document.createElement('textarea');
    area.id = id;
    area.rows = 3;
    area.placeholder = type === 'table' ? 'one row per line, cells separated by |' : '<p>HTML</p>';
    return area;
  }
  const input = document.createElement('input');
  input.id = id;
  input.type = type === 'checkbox' ? 'checkbox' : type === 'date' ? 'date' : type === 'link' ? 'url' : 'text';
  return input;
}
$('template-read').addEventListener(
  'click',
  (e) =>
    void action('template', e.currentTarget as HTMLButtonElement, async () => {
      needKey();
      const file = fileOf('template-file');
      await openForTelemetry(file);
      const fields = await client().annotateFields(file);
      const box = $('template-fields');
      box.replaceChildren();
      formFields = [];
      fields.forEach((field, i) => {
        const key = field.id ?? field.tag ?? field.alias ?? field.group;
        if (!key) return;
        const type = (ANNOTATE_TYPES.has(field.type) ? field.type : 'text') as AnnotateField['type'];
        if (type === 'image') return; // images need a file picker: not in this form
        const id = `tf-${i}`;
        const input = inputFor(type, id);
        input.dataset.field = key;
        const label = el(
          'label',
          { htmlFor: id },
          `${field.alias ?? field.tag ?? field.id ?? key} `,
          el('small', {}, `(${type}, ${field.location})`),
        );
        box.append(el('div', { className: 'field' }, label, input));
        formFields.push({ field, input, type });
      });
      $('template-form').hidden = formFields.length === 0;
      $('template-status').textContent = formFields.length
        ? `${fields.length} field${fields.length === 1 ? '' : 's'} found: fill them in and press “Fill the template”.`
        : `No fillable field found in ${file.name}.`;
    }),
);
function valueOf(f: FormField): AnnotateField['value'] {
  const v = f.input.value;
  switch (f.type) {
    case 'checkbox':
      return (f.input as HTMLInputElement).checked;
    case 'table':
      return v
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => l.split('|').map((c) => c.trim()));
    case 'link':
      return { url: v, text: v };
    default:
      return v;
  }
}
$('template-form').addEventListener('submit', (e) => {
  e.preventDefault();
  void action('template', $<HTMLButtonElement>('template-fill'), async () => {
    needKey();
    const file = fileOf('template-file');
    const to = $<HTMLSelectElement>('template-to').value as 'docx' | 'pdf';
    const fields = formFields
      .filter((f) => f.type === 'checkbox' || f.input.value !== '')
      .map((f) => {
        const { field } = f;
        const target = field.id ? { id: field.id } : field.tag ? { tag: field.tag } : field.alias ? { alias: field.alias } : { group: field.group! };
        return { ...target, type: f.type, value: valueOf(f) } as AnnotateField;
      });
    const r = await client().annotate(file, fields, { to });
    const bytes = fromBase64(r.document.base64);
    offerDownload(
      'template',
      bytes,
      to === 'pdf' ? 'application/pdf' : 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      `${stem(file.name)}-filled.${to}`,
    );
    const rep = r.report as { filled?: unknown; unmatched?: unknown; unfilled?: unknown } | undefined;
    const count = (x: unknown) => (Array.isArray(x) ? x.length : typeof x === 'number' ? x : 0);
    $('template-status').textContent = `Filled ${count(rep?.filled)} field(s); unmatched ${count(rep?.unmatched)}, unfilled ${count(rep?.unfilled)}.`;
  });
});

// ---- 4. sign --------------------------------------------------------------------------------------------------

$('sign-go').addEventListener(
  'click',
  (e) =>
    void action('sign', e.currentTarget as HTMLButtonElement, async () => {
      needKey();
      const file = fileOf('sign-file');
      const name = $<HTMLInputElement>('sign-name').value.trim();
      const email = $<HTMLInputElement>('sign-email').value.trim();
      await openForTelemetry(file);
      const now = new Date().toISOString();
      const r = await client().sign({
        document: file,
        signer: { name, email, userAgent: navigator.userAgent },
        auditTrail: [
          { type: 'document.viewed', timestamp: now },
          { type: 'document.signed', timestamp: now, data: { method: 'playground' } },
        ],
      });
      const bytes = fromBase64(r.document.base64);
      offerDownload('sign', bytes, 'application/pdf', `${stem(file.name)}-signed.pdf`);
      const pages = await renderPdf($('sign-preview'), bytes, { count: 1, last: true, label: 'Signed PDF' });
      $('sign-status').textContent = `Signed by ${name}. Below: page ${pages} of ${pages}, the audit page.`;
    }),
);

// ---- 5. verify ------------------------------------------------------------------------------------------------

type Colour = 'green' | 'amber' | 'red';
const colourOf = (indication: string | undefined, warnings = 0): Colour =>
  indication === 'TOTAL_PASSED' ? (warnings ? 'amber' : 'green') : indication === 'TOTAL_FAILED' ? 'red' : 'amber';
const WORD: Record<Colour, string> = { green: 'Valid', amber: 'Indeterminate', red: 'Invalid' };
const dl = (rows: Array<[string, string | undefined | null]>) =>
  el('dl', {}, ...rows.filter(([, v]) => v !== undefined && v !== null && v !== '').flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, String(v))]));

function renderReport(file: File, r: VerifyResponse): void {
  const box = $('verify-report');
  const overall: Colour = r.valid ? 'green' : r.indication === 'TOTAL_FAILED' ? 'red' : 'amber';
  const head = el(
    'div',
    { className: `report ${overall}`, id: 'verify-overall' },
    el('h3', {}, `${WORD[overall]}: ${r.indication.replaceAll('_', ' ').toLowerCase()}`),
    el('p', {}, r.reason),
    dl([
      ['Signed by', r.signer ? [r.signer.name, r.signer.email ? `<${r.signer.email}>` : ''].filter(Boolean).join(' ') : undefined],
      ['Signed at', r.signer?.signedAt],
      ['File', file.name],
      ['Signatures', String(r.signatureCount)],
      ['Revisions', r.document.revisions?.toString()],
      ['SHA-256', r.document.sha256],
    ]),
  );
  head.dataset.colour = overall;
  const sigs = r.signatures.map((s, i) => {
    const warnings = s.warnings?.length ?? 0;
    const colour = colourOf(s.indication, warnings);
    const div = el(
      'div',
      { className: `report signature ${colour}` },
      el('h4', {}, `Signature ${i + 1}${s.fieldName ? ` (${s.fieldName})` : ''}: ${WORD[colour]}`),
      dl([
        ['Signer', [s.signer?.name, s.signer?.email ? `<${s.signer.email}>` : ''].filter(Boolean).join(' ') || s.signer?.subject],
        ['Signed at', s.signedAt],
        ['Indication', [s.indication, s.subIndication].filter(Boolean).join(' / ')],
        ['Coverage', s.coverage?.replaceAll('_', ' ').toLowerCase()],
        ['Modifications after signing', s.modificationsAfter?.level?.replaceAll('_', ' ').toLowerCase()],
        [
          'Integrity',
          s.integrity
            ? `digest ${s.integrity.digestMatches ? 'matches' : 'does NOT match'}, signature ${s.integrity.signatureValid ? 'valid' : 'NOT valid'}`
            : undefined,
        ],
        [
          'Certificate',
          s.certificate
            ? `chain ${s.certificate.chainValid ? 'valid' : 'not valid'}, ${s.certificate.trusted ? 'trusted' : 'not trusted'}`
            : undefined,
        ],
        ['Issuer', s.signer?.issuer],
        ['Issued by this service', s.issuedByThisService === undefined ? undefined : s.issuedByThisService ? 'yes' : 'no'],
      ]),
      ...(s.problems?.length ? [el('p', {}, el('strong', {}, 'Problems:')), el('ul', {}, ...s.problems.map((p) => el('li', {}, p)))] : []),
      ...(warnings ? [el('p', {}, el('strong', {}, 'Warnings:')), el('ul', {}, ...s.warnings!.map((w) => el('li', {}, w)))] : []),
    );
    div.dataset.colour = colour;
    return div;
  });
  const parts: HTMLElement[] = [head, ...sigs];
  if (r.auditTrail) {
    const { hashMatches, coveredBySignature, ...rest } = r.auditTrail;
    const flat = (v: unknown): string =>
      v && typeof v === 'object'
        ? Object.entries(v as Record<string, unknown>)
            .filter(([, x]) => x !== null && x !== undefined && x !== '')
            .map(([k, x]) => `${k}: ${typeof x === 'object' ? JSON.stringify(x) : String(x)}`)
            .join(', ')
        : String(v);
    const colour: Colour = hashMatches === false ? 'red' : hashMatches && coveredBySignature !== false ? 'green' : 'amber';
    const lists = Object.entries(rest).filter(([, v]) => Array.isArray(v) && v.length) as Array<[string, unknown[]]>;
    const div = el(
      'div',
      { className: `report audit ${colour}`, id: 'verify-audit' },
      el('h4', {}, 'Audit trail'),
      dl([
        ['Hash matches', hashMatches === undefined ? undefined : hashMatches ? 'yes' : 'NO'],
        ['Covered by the signature', coveredBySignature === undefined ? undefined : coveredBySignature ? 'yes' : 'NO'],
        ...Object.entries(rest)
          .filter(([, v]) => !Array.isArray(v) && v !== null && v !== undefined)
          .map(([k, v]) => [k, flat(v)] as [string, string]),
      ]),
      ...lists.flatMap(([k, items]) => [
        el('p', {}, el('strong', {}, `${k}:`)),
        el('ol', { className: 'audit-events' }, ...items.map((ev) => el('li', {}, flat(ev)))),
      ]),
    );
    div.dataset.colour = colour;
    parts.push(div);
  }
  box.replaceChildren(...parts);
}
$('verify-go').addEventListener(
  'click',
  (e) =>
    void action('verify', e.currentTarget as HTMLButtonElement, async () => {
      needKey();
      const file = fileOf('verify-file');
      $('verify-report').replaceChildren();
      const r = await client().verify(file);
      renderReport(file, r);
      $('verify-status').textContent = `Verified ${file.name}.`;
    }),
);

document.body.dataset.ready = 'true';
