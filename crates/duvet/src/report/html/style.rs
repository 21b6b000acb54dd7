//! The page's style sheet: one `<style>` in the page (its policy allows no other).

/// The page's style (the filters' rules are added after it).
pub(super) const STYLE: &str = "\
:root{color-scheme:light;--fg:#1f2328;--muted:#57606a;--line:#d0d7de;--link:#0b57d0;\
font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;line-height:1.5;color:var(--fg);background:#fff}
*{box-sizing:border-box}
body{margin:0 auto;max-width:72rem;padding:0 1rem 2rem;overflow-wrap:anywhere}
a{color:var(--link)}
a:focus-visible,summary:focus-visible,input:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}
h1{font-size:1.6rem;margin:1rem 0 .25rem}
h2{font-size:1.35rem;margin:2rem 0 .25rem;padding-top:1rem;border-top:2px solid var(--fg)}
h3{font-size:1.1rem;margin:0}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
.sum,.key,.at,.n{color:var(--muted)}
.sum{margin:.25rem 0}
.key,.at{margin:0 0 .5rem}
nav ul{list-style:none;padding:0;margin:.5rem 0;display:flex;flex-wrap:wrap;gap:.25rem 1.5rem}
.filters{border:1px solid var(--line);border-radius:6px;margin:1rem 0;padding:.5rem .75rem;display:flex;flex-wrap:wrap;gap:.25rem .5rem}
.filters legend{font-weight:600;padding:0 .25rem}
.f{display:inline-flex;align-items:center;gap:.25rem;min-height:2rem}
.f input{margin:0;width:1.1rem;height:1.1rem}
.f label{cursor:pointer;padding:.125rem .25rem}
.f input:checked+label{font-weight:700;text-decoration:underline}
.dot{display:inline-block;width:.7rem;height:.7rem;border-radius:50%;margin-right:.3rem}
.dot.b-complete{background:#2da44e}.dot.b-exception{background:#5a67d8}.dot.b-missing-test{background:#d4a72c}
.dot.b-missing-citation{background:#e16f24}.dot.b-partial{background:#a626a4}.dot.b-not-started{background:#7c5cc4}
.dot.b-not-covered{background:#cf222e}
.legend{margin:.5rem 0 1rem}
.legend summary,.toc summary,.text summary{cursor:pointer;color:var(--link);min-height:1.5rem}
.legend dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem .75rem;margin:.5rem 0}
.legend dd{margin:0}
.badge{display:inline-block;padding:0 .4rem;border-radius:4px;font-size:.85rem;font-weight:600;white-space:nowrap}
.b-complete{background:#d1f4dc;color:#0f3d1f}
.b-exception{background:#dde3fb;color:#22286b}
.b-missing-test{background:#fbf0b5;color:#5a3a00}
.b-missing-citation{background:#fde0c2;color:#6b2a00}
.b-partial{background:#f6dcf6;color:#5f1760}
.b-not-started{background:#e7e1f7;color:#3b1f73}
.b-not-covered{background:#fbd5d5;color:#6e1111}
.over{display:flex;flex-wrap:wrap;gap:0 2.5rem;align-items:flex-start}
.over>div{flex:0 1 24rem}
.totals{border-collapse:collapse;margin:.5rem 0;font-size:.9rem;overflow-wrap:normal}
.totals caption{text-align:left;color:var(--muted);padding-bottom:.25rem}
.totals th,.totals td{border-bottom:1px solid var(--line);padding:.2rem .45rem;text-align:right}
.totals thead th:first-child{text-align:left}
.totals th[scope=row]{text-align:left;font-weight:400}
.totals tfoot th,.totals tfoot td{font-weight:700}
.totals td.zero{color:var(--muted)}
.toc ol{margin:.25rem 0;padding-left:1.5rem}
.sec{border-top:1px solid var(--line);padding:1rem 0 .5rem}
.reqs{list-style:none;padding:0;margin:.5rem 0}
.req{border-left:4px solid var(--line);padding:.25rem 0 .25rem .75rem;margin:.75rem 0}
.req.s-complete{border-color:#2da44e}.req.s-exception{border-color:#5a67d8}
.req.s-missing-test{border-color:#d4a72c}.req.s-missing-citation{border-color:#e16f24}
.req.s-partial{border-color:#a626a4}.req.s-not-started{border-color:#7c5cc4}
.req.s-not-covered{border-color:#cf222e}
.req:target{background:#f1f6ff}
.rh{display:flex;flex-wrap:wrap;gap:.25rem .5rem;align-items:baseline}
.lvl{font-size:.8rem;font-weight:700;letter-spacing:.03em}
.rt{margin:.25rem 0;font-weight:500}
.cites{margin:.25rem 0;padding-left:1.25rem;font-size:.92rem}
.cites li{margin:.15rem 0}
.k{font-size:.75rem;font-weight:700;text-transform:uppercase;letter-spacing:.03em;color:var(--muted)}
.m{color:var(--muted);font-size:.85rem}
.tag{border:1px solid var(--line);border-radius:4px;padding:0 .3rem}
.why,.cites q{color:var(--muted)}
.noreq{color:var(--muted);font-style:italic;margin:.25rem 0}
.other{margin:.5rem 0 0;font-size:.92rem}
.new{margin:.25rem 0;font-size:.9rem}
.text{margin:.5rem 0}
.body{border:1px solid var(--line);border-radius:6px;padding:0 .75rem;background:#fafbfc;margin-top:.25rem}
.body p{white-space:pre-wrap;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem;margin:.6rem 0}
mark{color:#111;border-radius:2px}
.h-ok{background:#b6ecc6}
.h-part{background:#f8e08e}
.h-none{background:#f8c4c4;text-decoration:underline dotted}
.h-cite{background:#d6e6fb}
mark:target{outline:2px solid #0b57d0}
@media (min-width:64rem){.cols{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:0 2rem;align-items:start}}
footer{margin-top:2rem;color:var(--muted);font-size:.85rem;border-top:1px solid var(--line)}
@media (max-width:40rem){body{padding:0 .6rem 1.5rem}.legend dl{grid-template-columns:1fr}.legend dd{margin-bottom:.4rem}
.totals{font-size:.8rem;width:100%}.totals th,.totals td{padding:.15rem .2rem}.totals .badge{font-size:.75rem;padding:0 .25rem}}
";
