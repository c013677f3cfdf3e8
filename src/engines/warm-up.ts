/**
 * The engine thread's JIT warm-up: a fresh thread converts a small built-in document set a few times before
 * it counts as ready, so the first requests after a start (or after a thread was replaced) do not run the
 * Markdown/HTML → DOCX code in V8's interpreter.
 *
 * Why: an 11 KB Markdown report took ~20–40 ms of CPU per conversion for its first ~15 conversions in a fresh
 * thread (interpreter, then background compilation and the garbage collector sizing its heap), and ~2.5 ms
 * once V8 had optimised the walk (measured on the shared 2-core host, 26 Nov, `process.cpuUsage`). Over HTTP
 * that was most of the answer time of the first few dozen requests. The warm-up costs a few hundred ms of
 * one thread's start-up, outside any job's time budget (pool.ts starts a budget when a job is announced).
 *
 * The documents cover what a Markdown/HTML report uses — headings, emphasis, links, inline code, nested and
 * task lists, tables with alignment, code blocks, quotes, footnotes, rules; HTML with inline CSS and a
 * table — with different text from iteration to iteration, so the type feedback is that of real input.
 */

/** A report-like Markdown document of a few KB; `n` varies its text and numbers. */
export function warmUpMarkdown(n: number): string {
  const out: string[] = [`# Warm-up ${n}: project status\n\nThis page is written by *Folio* itself at start; it is **never** sent anywhere.\n\n`];
  for (let s = 1; s <= 6; s++) {
    const k = n * 7 + s;
    out.push(
      `## Part ${s}\n\n` +
        `Work package ${k} moved ~~late~~ on time: *${k % 10} of 10* steps done, **${(k * 3.1).toFixed(1)} h** logged, ` +
        `details at <https://example.org/wp/${k}> and in the [tracker](https://example.org/t/${k} "tracker ${k}"). ` +
        `The \`job-${k}\` runner finished.[^n${s}]  \nA second line after a hard break.\n\n` +
        `### ${s}.1 Items\n\n` +
        `* item one, _emphasis_ and \`code\`\n    * nested **strong** item\n    * nested item ${k}\n* item two\n\n` +
        `1. first step\n2. second step\n   1. sub-step ${k}\n3. third step\n\n` +
        `- [x] done ${k}\n- [ ] open ${k + 1}\n\n` +
        `| Name | Count | Share | Note |\n|:---|---:|:---:|---|\n` +
        `| alpha | ${k} | ${k % 100}% | first |\n| beta | ${k * 2} | ${(k * 3) % 100}% | *second* |\n| gamma | ${k * 5} | 1% | \`third\` |\n\n` +
        `> A quoted remark ${k}, with a [link](https://example.org/q/${k}).\n>\n> Its second paragraph.\n\n` +
        '```js\n' +
        `function part${s}(x) {\n  return x * ${k}; // <${k}> & "quotes"\n}\n` +
        '```\n\n' +
        `    indented code ${k}\n\n` +
        `---\n\n` +
        `[^n${s}]: Note ${k}: reconciled on day ${k % 28}.\n\n`,
    );
  }
  return out.join('');
}

/** A small HTML page with a style sheet, inline CSS, lists and a table; `n` varies its text. */
export function warmUpHtml(n: number): string {
  const rows = Array.from(
    { length: 6 },
    (_, i) => `<tr><td>row ${i + n}</td><td style="text-align:right">${(i + 1) * n}</td><td><em>ok</em></td></tr>`,
  );
  return (
    `<!doctype html><html><head><style>h1{color:#224466} .note{font-style:italic} td{border:1px solid #999}</style></head><body>` +
    `<h1>Warm-up ${n}</h1><p class="note">Written by Folio at start.</p>` +
    `<p>Text with <strong>bold</strong>, <em>italic</em>, <u>underline</u>, <code>code</code> and <a href="https://example.org/${n}">a link</a>.</p>` +
    `<ul><li>one<ul><li>nested ${n}</li></ul></li><li>two</li></ul><ol><li>first</li><li>second</li></ol>` +
    `<table><thead><tr><th>Name</th><th>Count</th><th>State</th></tr></thead><tbody>${rows.join('')}</tbody></table>` +
    `<blockquote><p>Quoted ${n}.</p></blockquote><pre><code>let x = ${n};</code></pre></body></html>`
  );
}
