// Linking: an IR line carries its source line (data-s) and every source line of its chain (data-c).
// Clicking or hovering a line highlights its source line and everything that line became, in every pane.
(function () {
  "use strict";
  const panes = Array.from(document.querySelectorAll(".lines"));
  function linked(s) { return document.querySelectorAll('.l[data-c~="' + s + '"]'); }
  function mark(cls, s) {
    document.querySelectorAll(".l." + cls).forEach(function (e) { e.classList.remove(cls); });
    if (s) { linked(s).forEach(function (e) { e.classList.add(cls); }); }
  }
  function select(s, from) {
    mark("sel", s);
    document.body.dataset.selected = s || "";
    const title = document.getElementById("selected");
    if (title) { title.textContent = s ? "source line " + s : "none (click a line)"; }
    if (!s) { return; }
    panes.forEach(function (pane) {
      if (pane.contains(from)) { return; }
      const first = pane.querySelector(".l.sel");
      if (first) { pane.scrollTop = first.offsetTop - pane.offsetTop - pane.clientHeight / 3; }
    });
  }
  document.addEventListener("click", function (ev) {
    const line = ev.target.closest(".l");
    if (line) { select(line.dataset.s, line); return; }
    const item = ev.target.closest(".finding[data-s], .access[data-s]");
    if (item) { select(item.dataset.s, item); }
  });
  document.addEventListener("mouseover", function (ev) {
    const line = ev.target.closest(".l");
    mark("hover", line ? line.dataset.s : null);
  });
  document.getElementById("dbg").addEventListener("change", function (ev) {
    document.body.classList.toggle("show-dbg", ev.target.checked);
  });
  document.getElementById("col").addEventListener("change", function (ev) {
    document.body.classList.toggle("colours", ev.target.checked);
  });
})();
