// The `folio/layers` rule: which folder of src/ may import which (the layer table is in eslint.config.js).
//
// Written here rather than with core `no-restricted-imports` because (1) that rule does not see `import()` —
// how the engine threads load capabilities lazily — nor `typeof import('…')` type queries; (2) its patterns
// match the specifier as written, so a relative path means a different folder at every depth; (3) a file gets one
// `no-restricted-imports` setting, which per-folder blocks would replace (the pdf-lib door uses it). Plugins that
// resolve paths (eslint-plugin-boundaries, import-x's no-restricted-paths) need a TypeScript resolver for the
// `.js` specifiers of `.ts` files: two more packages and slower runs for what path.resolve answers here.
//
// Every relative specifier is resolved against the importing file; both ends are placed in a unit (a folder such
// as `src/pdf`, or a file such as `src/api.ts`) and its layer. An import is refused when it goes to a higher layer,
// to another unit of the same layer past that unit's surface files (for layers with `peers: 'surface'`), or when
// a `forbid` entry names it; `allow` entries (each with its reason) are the known exceptions.
import path from 'node:path';

/**
 * @typedef {{ name: string, units: string[], peers?: 'free' | 'surface', surface?: string[] }} Layer
 * @typedef {{ from: string | string[], to: string, reason?: string, message?: string, exceptFiles?: string[] }} PathPair
 *   `exceptFiles`: regular expressions on the importing file's name (not its path) that the entry does not cover.
 * @typedef {{ root: string, layers: Layer[], forbid?: PathPair[], allow?: PathPair[], scope?: string }} Options
 */

const toPosix = (p) => p.split(path.sep).join('/');

/** `src/api.js` → `src/api.ts`: specifiers name the emitted file, the table names the source. */
const sourceName = (rel) => rel.replace(/\.js$/, '.ts').replace(/\.mjs$/, '.mts');

/** A `from`/`to` entry names a file (`src/api.ts`) or a folder (`src/pdf`, everything below it). */
const covers = (entry, rel) => rel === entry || rel.startsWith(entry + '/');

function place(rel, layers) {
  for (let i = 0; i < layers.length; i++) {
    const unit = layers[i].units.find((u) => covers(u, rel));
    if (unit) return { index: i, layer: layers[i], unit };
  }
  return undefined;
}

/** The module specifier of an import-like node, when it is a plain string. */
function specifierOf(node) {
  switch (node.type) {
    case 'ImportDeclaration':
    case 'ExportAllDeclaration':
    case 'ExportNamedDeclaration':
    case 'ImportExpression':
      return literalText(node.source);
    case 'TSImportType': // `typeof import('…')`, `import('…').T`
      return literalText(node.source);
    case 'TSExternalModuleReference':
      return literalText(node.expression);
    default:
      return undefined;
  }
}

function literalText(node) {
  if (!node) return undefined;
  if (node.type === 'Literal' && typeof node.value === 'string') return node.value;
  if (node.type === 'TemplateLiteral' && node.expressions.length === 0) return node.quasis[0]?.value.cooked ?? undefined;
  return undefined;
}

/** @type {import('eslint').Rule.RuleModule} */
const layers = {
  meta: {
    type: 'problem',
    docs: { description: 'Imports between the layers of src/ go downward only (table in eslint.config.js).' },
    schema: [
      {
        type: 'object',
        properties: {
          root: { type: 'string' },
          scope: { type: 'string' },
          layers: { type: 'array' },
          forbid: { type: 'array' },
          allow: { type: 'array' },
        },
        required: ['root', 'layers'],
        additionalProperties: false,
      },
    ],
    messages: {
      upward: '{{file}} ({{fromLayer}}) imports {{target}} ({{toLayer}}): a lower layer never imports a higher one.',
      internals: '{{file}} imports {{target}}, inside {{unit}}: import {{surface}} of another {{layer}} unit, not its internals.',
      forbidden: '{{file}} imports {{target}}: {{message}}',
      unplaced: '{{file}} is in no layer: add its folder to the layer table in eslint.config.js.',
      unplacedTarget: '{{file}} imports {{target}}, which is in no layer: add its folder to the layer table in eslint.config.js.',
    },
  },
  create(context) {
    /** @type {Options} */
    const options = context.options[0];
    const scope = options.scope ?? 'src';
    const file = toPosix(path.relative(options.root, context.filename));
    if (!covers(scope, file)) return {};
    const from = place(file, options.layers);
    const name = path.posix.basename(file);
    const matches = (pair, target) =>
      [pair.from].flat().some((f) => covers(f, file)) && covers(pair.to, target) && !(pair.exceptFiles ?? []).some((re) => new RegExp(re).test(name));
    const allowed = (target) => (options.allow ?? []).some((a) => matches(a, target));

    const check = (node) => {
      const spec = specifierOf(node);
      if (!spec || !spec.startsWith('.')) return;
      const target = sourceName(toPosix(path.relative(options.root, path.resolve(path.dirname(context.filename), spec))));
      if (!covers(scope, target) || !from) return;
      const forbid = (options.forbid ?? []).find((f) => matches(f, target));
      if (forbid && !allowed(target)) {
        context.report({ node, messageId: 'forbidden', data: { file, target, message: forbid.message ?? forbid.reason ?? '' } });
        return;
      }
      const to = place(target, options.layers);
      if (!to) {
        context.report({ node, messageId: 'unplacedTarget', data: { file, target } });
        return;
      }
      if (to.unit === from.unit || allowed(target)) return;
      if (to.index > from.index) {
        context.report({ node, messageId: 'upward', data: { file, target, fromLayer: from.layer.name, toLayer: to.layer.name } });
        return;
      }
      if (to.index === from.index && from.layer.peers === 'surface') {
        const surface = (from.layer.surface ?? ['index.ts']).map((s) => `${to.unit}/${s}`);
        if (!surface.includes(target)) {
          context.report({
            node,
            messageId: 'internals',
            data: { file, target, unit: to.unit, layer: from.layer.name, surface: surface.join(' or ') },
          });
        }
      }
    };

    return {
      Program(node) {
        if (!from) context.report({ node, messageId: 'unplaced', data: { file } });
      },
      ImportDeclaration: check,
      ExportAllDeclaration: check,
      ExportNamedDeclaration: check,
      ImportExpression: check,
      TSImportType: check,
      TSExternalModuleReference: check,
    };
  },
};

export default { meta: { name: 'folio' }, rules: { layers } };
