/**
 * Bounded selector matching for the cascade.
 *
 * css-select matches right to left and backtracks over combinators: `div div … div` (41 compounds) over 40
 * nested divs tries every way of choosing ancestors, about 4× more work per two levels (minutes at depth
 * 41). Here each compound is compiled by css-select on its own (so simple selectors and pseudo-classes mean
 * exactly what they meant before), and the combinators between compounds are resolved in one top-down pass
 * over the document that keeps, per element, which prefixes of the selector match there: work is
 * elements × compounds, never exponential.
 *
 * Selector lists inside pseudo-classes (`:is(div div …)`, `:not(…)`, `:has(…)`) still backtrack inside
 * css-select, so every DOM access css-select makes goes through an adapter that charges a shared budget;
 * exceeding it throws MatchBudgetExceeded, and the cascade decides what to drop.
 */
import * as DomUtils from 'domutils';
import { compile, selectAll, type Options } from 'css-select';
import type { Selector } from 'css-what';
import { isTag, type AnyNode, type Document, type Element } from 'domhandler';

export class MatchBudgetExceeded extends Error {
  constructor() {
    super('selector matching budget exceeded');
  }
}

/** Work units left; one unit is roughly one DOM access or one compound test. */
export class MatchBudget {
  constructor(public left: number) {}
  charge(units: number): void {
    if ((this.left -= units) < 0) throw new MatchBudgetExceeded();
  }
}

type Node = AnyNode;

/** css-select's default adapter (domutils), each access charged to `budget`. */
function countingAdapter(budget: MatchBudget): Options<Node, Element>['adapter'] {
  const D = DomUtils;
  return {
    isTag: (n: Node): n is Element => {
      budget.charge(1);
      return isTag(n);
    },
    getAttributeValue: (e: Element, name: string) => {
      budget.charge(1);
      return D.getAttributeValue(e, name);
    },
    getChildren: (n: Node) => {
      const c = D.getChildren(n);
      budget.charge(1 + c.length); // callers walk the array
      return c;
    },
    getName: (e: Element) => {
      budget.charge(1);
      return D.getName(e);
    },
    getParent: (e: Element) => {
      budget.charge(1);
      return D.getParent(e) as Node | null;
    },
    getSiblings: (n: Node) => {
      const s = D.getSiblings(n);
      budget.charge(1 + s.length);
      return s;
    },
    prevElementSibling: (n: Node) => {
      budget.charge(1);
      return D.prevElementSibling(n);
    },
    getText: (n: Node) => {
      const t = D.getText(n);
      budget.charge(1 + t.length);
      return t;
    },
    hasAttrib: (e: Element, name: string) => {
      budget.charge(1);
      return D.hasAttrib(e, name);
    },
    removeSubsets: (nodes: Node[]) => {
      budget.charge(1 + nodes.length * 4);
      return D.removeSubsets(nodes);
    },
  };
}

const TRAVERSALS = new Set(['descendant', 'child', 'sibling', 'adjacent']);

/** A selector compiled for `matchAll`, or undefined when css-select refuses it. */
export interface CompiledSelector {
  /** Compound tests, left to right. */
  tests: Array<(el: Element) => boolean>;
  /** combinators[k]: how compound k relates to compound k - 1 (combinators[0] unused). */
  combinators: string[];
}

export class SelectorMatcher {
  readonly budget: MatchBudget;
  private readonly options: Options<Node, Element>;

  constructor(
    private readonly doc: Document,
    units: number,
  ) {
    this.budget = new MatchBudget(units);
    this.options = { adapter: countingAdapter(this.budget) };
  }

  /**
   * The elements `seq` (one complex selector, as css-what parsed it) matches, or undefined when css-select
   * refuses it. `source` is its text, for the shapes the top-down pass does not take (a leading combinator,
   * `<`, `||`), which css-select matches as before. Throws MatchBudgetExceeded.
   */
  select(seq: Selector[], source: string): Element[] | undefined {
    const compiled = this.compileSequence(seq);
    if (compiled === null) return this.selectString(source);
    if (!compiled) return undefined;
    return this.matchAll(compiled);
  }

  /** css-select on the selector text, as the cascade matched before (selector lists css-what split). */
  selectString(source: string): Element[] | undefined {
    try {
      return selectAll(source, this.doc, this.options) as Element[];
    } catch (e) {
      if (e instanceof MatchBudgetExceeded) throw e;
      return undefined;
    }
  }

  /** undefined: refused by css-select; null: not a plain chain of compounds (matched by css-select whole). */
  private compileSequence(seq: Selector[]): CompiledSelector | undefined | null {
    const groups: Selector[][] = [[]];
    const combinators: string[] = [''];
    for (const t of seq) {
      if (TRAVERSALS.has(t.type)) {
        if (!groups[groups.length - 1]!.length) return null;
        groups.push([]);
        combinators.push(t.type);
      } else if (t.type === 'parent' || t.type === 'column-combinator') return null;
      else groups[groups.length - 1]!.push(t);
    }
    if (!groups[groups.length - 1]!.length) return null;
    const tests: CompiledSelector['tests'] = [];
    try {
      for (const g of groups) tests.push(compile<Node, Element>([g], this.options) as (el: Element) => boolean);
    } catch (e) {
      if (e instanceof MatchBudgetExceeded) throw e;
      return undefined;
    }
    return { tests, combinators };
  }

  /**
   * One pass in document order (what css-select's selectAll visits: every element, not inside <template>).
   * For each element, m[k] = "compounds 0..k match with this element as compound k". A child reads its
   * parent's m (>), the OR over its ancestors (descendant), its previous element sibling's m (+) and the OR
   * over its previous siblings (~): each (element, compound) is tested at most once.
   */
  private matchAll({ tests, combinators }: CompiledSelector): Element[] {
    const K = tests.length;
    const last = K - 1;
    const out: Element[] = [];
    const budget = this.budget;
    const zero = new Uint8Array(K);
    interface Level {
      kids: AnyNode[];
      i: number;
      parentM: Uint8Array; // the parent element's m (zero for the document)
      anc: Uint8Array; // OR of m over the parent and its element ancestors
      prevM: Uint8Array; // the previous element sibling's m
      sib: Uint8Array; // OR of m over previous element siblings
    }
    const stack: Level[] = [{ kids: this.doc.children, i: 0, parentM: zero, anc: zero, prevM: zero, sib: zero }];
    while (stack.length) {
      const lv = stack[stack.length - 1]!;
      if (lv.i >= lv.kids.length) {
        stack.pop();
        continue;
      }
      const node = lv.kids[lv.i++]!;
      if (!isTag(node)) continue;
      const el = node as Element;
      budget.charge(1);
      let m: Uint8Array = zero;
      for (let k = 0; k < K; k++) {
        let ok: number | undefined;
        if (k === 0) ok = 1;
        else {
          switch (combinators[k]) {
            case 'descendant':
              ok = lv.anc[k - 1];
              break;
            case 'child':
              ok = lv.parentM[k - 1];
              break;
            case 'adjacent':
              ok = lv.prevM[k - 1];
              break;
            default:
              ok = lv.sib[k - 1];
              break; // sibling (~)
          }
        }
        if (!ok) continue;
        budget.charge(1);
        if (!tests[k]!(el)) continue;
        if (m === zero) m = new Uint8Array(K);
        m[k] = 1;
      }
      if (m[last]) out.push(el);
      lv.prevM = m;
      if (m !== zero) lv.sib = orInto(lv.sib, m, zero);
      if (el.children.length && el.name !== 'template') {
        stack.push({ kids: el.children, i: 0, parentM: m, anc: m === zero ? lv.anc : orInto(lv.anc, m, zero), prevM: zero, sib: zero });
      }
    }
    return out;
  }
}

/** a | b as a new array (a and b are shared between levels, never written). */
function orInto(a: Uint8Array, b: Uint8Array, zero: Uint8Array): Uint8Array {
  if (a === zero) return b;
  const out = new Uint8Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! | b[i]!;
  return out;
}
