// A witness link puts a cursor at its run time on every timed plot, then the anchor scrolls there.
document.addEventListener('click', function (e) {
  var a = e.target.closest ? e.target.closest('a.tl') : null;
  if (!a) { return; }
  var t = parseFloat(a.getAttribute('data-t'));
  document.querySelectorAll('figure.timed').forEach(function (f) {
    var d = f.dataset, x0 = +d.x0, x1 = +d.x1, w = +d.w, t0 = +d.t0, t1 = +d.t1;
    var c = f.querySelector('.cursor');
    if (!c || !(t1 > t0)) { return; }
    var x = x0 + (t - t0) / (t1 - t0) * (x1 - x0);
    c.style.left = (100 * x / w) + '%';
    c.style.display = 'block';
    c.title = a.textContent;
  });
});

// The tenant selector shows one tenant's panel, or every panel the page has.
(function () {
  var sel = document.getElementById('tenant-select');
  if (!sel) { return; }
  sel.addEventListener('change', function () {
    document.querySelectorAll('section.tenant-panel').forEach(function (s) {
      s.style.display = (!sel.value || s.getAttribute('data-tenant') === sel.value) ? '' : 'none';
    });
  });
})();
