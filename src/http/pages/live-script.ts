// The one script of the pages (plain ES5-style JavaScript, sent inline with a nonce):
// - shows every <time datetime> in the browser's local time with its zone;
// - follows /api/events: a `run` event adds a row to each run list it belongs to (or replaces the
//   run's row: a parked run is sent when it parks, `waiting`, and again when it ends), a `reload` event
//   shows a banner with a refresh link (a form being filled in is never thrown away), a `reset` event
//   (the stream could not replay what was missed, SPEC §20) reloads the run lists and last-run cells
//   from a fresh copy of the page;
// - checks the JSON of the body editor as it is typed, and sends the run form with fetch so the
//   answer and trace show without leaving the page.
// Everything from the server is written with textContent: no markup is ever built from data.
export const LIVE_SCRIPT = `
(function () {
  'use strict';
  var zoneFormat = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' });
  function localTime(el) {
    var d = new Date(el.getAttribute('datetime'));
    if (!isNaN(d.getTime())) { el.textContent = zoneFormat.format(d); el.title = el.getAttribute('datetime'); }
  }
  function localTimes(root) { Array.prototype.forEach.call(root.querySelectorAll('time[datetime]'), localTime); }
  localTimes(document);

  function el(tag, text, cls) { var e = document.createElement(tag); if (text != null) e.textContent = String(text); if (cls) e.className = cls; return e; }
  function link(href, text, code) { var a = el('a'); a.href = href; if (code) a.appendChild(el('code', text)); else a.textContent = text; return a; }

  // As statusBadge in layout.ts: an End that answered 4xx or 5xx is amber, not a green success.
  function badge(run) {
    if (run.status === 'success' && run.httpStatus != null && run.httpStatus >= 400) return el('span', 'answered ' + run.httpStatus, 'badge warn');
    var tone = run.status === 'success' ? 'ok' : run.status === 'skipped' ? 'muted' : run.status === 'waiting' ? 'info' : 'bad';
    return el('span', run.status + (run.httpStatus != null ? ' ' + run.httpStatus : ''), 'badge ' + tone);
  }

  function runRow(run, showFlow) {
    var tr = el('tr', null, 'fresh');
    tr.setAttribute('data-run', run.id);
    var when = el('time', run.startedAt); when.setAttribute('datetime', run.startedAt); localTime(when);
    var td = el('td'); td.appendChild(when); tr.appendChild(td);
    var project = encodeURIComponent(run.projectId);
    if (showFlow) { td = el('td'); td.appendChild(link('/flows/' + project + '/' + encodeURIComponent(run.flow), run.flow)); tr.appendChild(td); }
    td = el('td', run.trigger + ' '); td.appendChild(el('span', run.method, 'muted'));
    if (run.replayOf) { td.appendChild(document.createTextNode(' ')); td.appendChild(el('span', 'replay', 'badge info')); }
    tr.appendChild(td);
    td = el('td'); td.appendChild(badge(run)); tr.appendChild(td);
    tr.appendChild(el('td', run.durationMs));
    td = el('td'); td.appendChild(link('/runs/' + project + '/' + encodeURIComponent(run.id), run.id, true)); tr.appendChild(td);
    td = el('td'); if (run.failedNodeId) { td.appendChild(el('code', run.failedNodeId)); td.appendChild(document.createTextNode(': ')); }
    td.appendChild(document.createTextNode(run.error || '')); tr.appendChild(td);
    return tr;
  }

  function addRun(run) {
    Array.prototype.forEach.call(document.querySelectorAll('tbody[data-runs]'), function (body) {
      if (body.getAttribute('data-runs') !== run.projectId) return;
      var flow = body.getAttribute('data-flow');
      if (flow && flow !== run.flow) return;
      var empty = body.querySelector('tr.empty'); if (empty) empty.remove();
      var row = runRow(run, body.getAttribute('data-show-flow') === '1');
      var same = Array.prototype.filter.call(body.rows, function (r) { return r.getAttribute('data-run') === run.id; })[0];
      if (same) { body.replaceChild(row, same); return; }
      body.insertBefore(row, body.firstChild);
      while (body.rows.length > 20) body.deleteRow(body.rows.length - 1);
    });
    Array.prototype.forEach.call(document.querySelectorAll('[data-last-run="' + CSS.escape(run.projectId + '/' + run.flow) + '"]'), function (cell) {
      cell.textContent = '';
      cell.appendChild(badge(run));
      cell.appendChild(document.createTextNode(' '));
      cell.appendChild(link('/runs/' + encodeURIComponent(run.projectId) + '/' + encodeURIComponent(run.id), 'just now'));
    });
  }

  // Swaps each run list and last-run cell for the one of a freshly fetched copy of this page.
  function reloadLists() {
    if (!window.fetch || !window.DOMParser) return;
    fetch(location.href, { headers: { accept: 'text/html' }, credentials: 'same-origin' })
      .then(function (res) { return res.ok ? res.text() : null; })
      .then(function (html) {
        if (!html) return;
        var fresh = new DOMParser().parseFromString(html, 'text/html');
        function swap(selector, key) {
          Array.prototype.forEach.call(document.querySelectorAll(selector), function (old) {
            var match = Array.prototype.filter.call(fresh.querySelectorAll(selector), function (n) { return key(n) === key(old); })[0];
            if (!match) return;
            var copy = document.importNode(match, true);
            old.parentNode.replaceChild(copy, old);
            localTimes(copy);
          });
        }
        swap('tbody[data-runs]', function (n) { return n.getAttribute('data-runs') + '/' + (n.getAttribute('data-flow') || ''); });
        swap('[data-last-run]', function (n) { return n.getAttribute('data-last-run'); });
      })
      .catch(function () {});
  }

  var state = document.getElementById('live-state');
  var wantsEvents = document.querySelector('[data-runs],[data-live]');
  if (wantsEvents && window.EventSource) {
    var source = new EventSource('/api/events');
    source.onopen = function () { if (state) state.textContent = '● live'; };
    source.onerror = function () { if (state) state.textContent = '○ reconnecting…'; };
    source.addEventListener('run', function (e) { try { addRun(JSON.parse(e.data)); } catch (err) {} });
    source.addEventListener('reset', function () { reloadLists(); });
    source.addEventListener('reload', function (e) {
      var info = {}; try { info = JSON.parse(e.data); } catch (err) {}
      var box = document.getElementById('reload-banner');
      if (!box) return;
      box.hidden = false;
      box.querySelector('span').textContent = 'Project ' + (info.projectId || '') + ' was reloaded (' + ((info.summary || []).join('; ') || 'files changed') + '). ';
    });
  }

  var editor = document.getElementById('body-editor');
  var editorState = document.getElementById('body-state');
  function checkJson() {
    if (!editor || !editorState) return true;
    if (editor.value.trim() === '') { editorState.textContent = 'empty body'; editorState.className = 'json-state muted'; return true; }
    try { JSON.parse(editor.value); editorState.textContent = '✓ valid JSON'; editorState.className = 'json-state ok'; return true; }
    catch (err) { editorState.textContent = '✗ ' + err.message; editorState.className = 'json-state bad'; return false; }
  }
  if (editor) { editor.addEventListener('input', checkJson); checkJson(); }

  var form = document.getElementById('run-form');
  var result = document.getElementById('run-result');
  if (form && result && window.fetch) {
    form.addEventListener('submit', function (e) {
      e.preventDefault();
      if (!checkJson()) { editor.focus(); return; }
      var button = form.querySelector('button[type=submit]');
      button.disabled = true; button.textContent = 'Running…';
      fetch(form.action, { method: 'POST', headers: { accept: 'application/json' }, body: new URLSearchParams(new FormData(form)) })
        .then(function (res) { return res.json(); })
        .then(function (answer) { showAnswer(answer); })
        .catch(function (err) { result.hidden = false; result.textContent = 'The run could not be sent: ' + err.message; })
        .then(function () { button.disabled = false; button.textContent = 'Run flow'; });
    });
  }

  function showAnswer(answer) {
    result.hidden = false;
    result.textContent = '';
    result.appendChild(el('h3', 'Answer'));
    var head = el('p');
    var ok = answer.status < 400;
    head.appendChild(el('span', 'HTTP ' + answer.status, 'badge ' + (ok ? 'ok' : 'bad')));
    if (answer.runId) {
      head.appendChild(document.createTextNode(' run '));
      head.appendChild(link('/runs/' + encodeURIComponent(answer.projectId) + '/' + encodeURIComponent(answer.runId), answer.runId, true));
    }
    result.appendChild(head);
    if (answer.errors && answer.errors.length) {
      var list = el('ul', null, 'problems');
      answer.errors.forEach(function (m) { list.appendChild(el('li', m)); });
      result.appendChild(list);
    }
    if (answer.body !== undefined && answer.body !== null) result.appendChild(el('pre', JSON.stringify(answer.body, null, 2)));
    if (answer.trace && answer.trace.steps) {
      result.appendChild(el('h3', 'Trace (' + answer.trace.durationMs + ' ms)'));
      var steps = el('ol', null, 'steps');
      answer.trace.steps.forEach(function (step) {
        var li = el('li', null, step.nodeId === answer.failedNodeId ? 'failed' : '');
        var h = el('div', step.name + ' ', 'step-head');
        h.appendChild(el('span', '(' + step.type + ', ' + step.nodeId + ')' + (step.port ? ' → ' + step.port : '') + (step.attempt ? ' · attempt ' + step.attempt : '') + ' · ' + step.durationMs + ' ms', 'muted'));
        li.appendChild(h);
        li.appendChild(el('pre', JSON.stringify(step.output, null, 2)));
        steps.appendChild(li);
      });
      result.appendChild(steps);
    }
  }
})();
`
