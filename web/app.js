// twin's web page: the fabric as a graph (d3 3.5 from Debian's libjs-d3), live over the lab's
// event stream, a panel for what is clicked, the lab's history. Everything comes from the
// server's API (/api/openapi.json); nothing is loaded from anywhere else.
'use strict';
(function () {
  var state = { lab: null, graph: null, ws: null, selected: null, token: sessionStorage.getItem('twin-token') || '' };
  var $ = function (id) { return document.getElementById(id); };
  // The address twin serve prints carries its token (?token=): kept for this tab, then taken
  // out of the address bar and the browser's history.
  var given = new URLSearchParams(location.search).get('token');
  if (given) {
    state.token = given;
    sessionStorage.setItem('twin-token', given);
    history.replaceState(null, '', location.pathname + location.hash);
  }

  function esc(s) {
    return String(s === undefined || s === null ? '' : s).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }
  function say(text) { $('status').textContent = text; }

  function api(method, path, body) {
    var headers = {};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (state.token) headers['Authorization'] = 'Bearer ' + state.token;
    return fetch(path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body) })
      .then(function (r) {
        if (r.status === 401) {
          var t = window.prompt('This server needs its token (twin serve --token-file):');
          if (t) { state.token = t; sessionStorage.setItem('twin-token', t); return api(method, path, body); }
        }
        return r.json().then(function (j) {
          if (!r.ok) throw new Error(j.error ? j.error.message : r.statusText);
          return j;
        });
      });
  }

  // ---- the graph -------------------------------------------------------------------------
  var svg = d3.select('#graph');
  var layer = svg.append('g');
  var linkLayer = layer.append('g'), nodeLayer = layer.append('g');
  svg.call(d3.behavior.zoom().scaleExtent([0.2, 4]).on('zoom', function () {
    layer.attr('transform', 'translate(' + d3.event.translate + ')scale(' + d3.event.scale + ')');
  }));
  var force = null;

  function roleFill(n) {
    if (n.kind === 'host') return '#eeeeee';
    if (n.kind === 'bridge') return '#ffffff';  // a LAN segment: the medium, not a router
    if (n.role.indexOf('super') >= 0) return '#e2d9f3';
    if (n.role.indexOf('spine') >= 0) return '#cfe2ff';
    if (n.role.indexOf('leaf') >= 0) return '#d1e7dd';
    return '#fff3cd';
  }
  function linkClass(l) {
    var c = 'link ' + (l.state || 'unknown');
    if (!l.state && l.failures.length) c = 'link degraded';
    if (!l.intended_up) c += ' intended-down';
    return c;
  }
  function nodeClass(n) {
    return 'node ' + (n.state || '') + (n.failures.length ? ' failing' : '');
  }

  function draw(g) {
    var first = !state.graph || state.graph.lab !== g.lab ||
      state.graph.nodes.length !== g.nodes.length || state.graph.links.length !== g.links.length;
    if (!first) {
      // Same shape: keep positions, update state.
      var old = {};
      state.graph.nodes.forEach(function (n) { old[n.name] = n; });
      g.nodes.forEach(function (n) { var o = old[n.name]; if (o) { n.x = o.x; n.y = o.y; n.px = o.px; n.py = o.py; } });
    }
    state.graph = g;
    var byName = {};
    g.nodes.forEach(function (n) { byName[n.name] = n; });
    g.links.forEach(function (l) { l.source = byName[l.a]; l.target = byName[l.b]; });
    var rect = $('canvas').getBoundingClientRect();
    var W = rect.width || 900, H = rect.height || 600;
    var tiers = d3.max(g.nodes, function (n) { return n.tier; }) + 1;
    var rowY = function (t) { return 60 + (H - 120) * (tiers > 1 ? t / (tiers - 1) : 0.5); };
    // Rows in plan order, spread evenly: a fabric reads like its drawing on a whiteboard.
    var rows = {};
    g.nodes.forEach(function (n) { (rows[n.tier] = rows[n.tier] || []).push(n); });
    Object.keys(rows).forEach(function (t) {
      var k = rows[t].length, step = Math.min(180, (W - 120) / Math.max(1, k - 1));
      rows[t].forEach(function (n, i) {
        n.fx = W / 2 + (i - (k - 1) / 2) * step;
        if (first) { n.x = n.fx; n.y = rowY(n.tier); }
      });
    });
    var links = linkLayer.selectAll('line.link').data(g.links, function (l) { return l.id; });
    links.enter().append('line').on('click', function (l) { select('link', l); })
      .append('title');
    links.exit().remove();
    links.attr('class', function (l) { return linkClass(l) + (state.selected === 'link:' + l.id ? ' selected' : ''); })
      .attr('data-link', function (l) { return l.id; })
      .attr('data-state', function (l) { return l.state; });
    links.select('title').text(function (l) {
      return l.a + ':' + l.a_interface + ' — ' + l.b + ':' + l.b_interface + ' MTU ' + l.mtu +
        (l.notes.length ? '\n' + l.notes.join('\n') : '');
    });
    var nodes = nodeLayer.selectAll('g.node').data(g.nodes, function (n) { return n.name; });
    var entered = nodes.enter().append('g').on('click', function (n) { select('node', n); });
    entered.append('rect').attr('x', -38).attr('y', -14).attr('width', 76).attr('height', 28);
    entered.append('text').attr('text-anchor', 'middle').attr('dy', 4);
    nodes.exit().remove();
    nodes.attr('class', function (n) { return nodeClass(n) + (state.selected === 'node:' + n.name ? ' selected' : ''); })
      .attr('data-node', function (n) { return n.name; })
      .attr('data-state', function (n) { return n.state; });
    nodes.select('rect').style('fill', roleFill)
      .style('stroke-dasharray', function (n) { return n.kind === 'bridge' ? '4 2' : null; });
    nodes.select('text').text(function (n) { return n.name; });
    if (force) force.stop();
    force = d3.layout.force().nodes(g.nodes).links(g.links).size([W, H])
      .charge(-300).linkDistance(80).gravity(0)
      .on('tick', function (e) {
        g.nodes.forEach(function (n) {
          n.y += (rowY(n.tier) - n.y) * 0.5;  // rows hold
          n.x += (n.fx - n.x) * 0.3 * e.alpha * 10;
        });
        links.attr('x1', function (l) { return l.source.x; }).attr('y1', function (l) { return l.source.y; })
          .attr('x2', function (l) { return l.target.x; }).attr('y2', function (l) { return l.target.y; });
        nodes.attr('transform', function (n) { return 'translate(' + n.x + ',' + n.y + ')'; });
      });
    force.start();
    if (!first) for (var i = 0; i < 50; ++i) force.tick();
    var v = g.validation;
    $('summary').innerHTML = g.nodes.length + ' nodes, ' + g.links.length + ' links' +
      (v ? ' · last validation: <span class="' + (v.failed || v.errors ? 'bad' : 'ok') + '">' + v.passed +
        ' passed, ' + v.failed + ' failed, ' + v.errors + ' errors</span>' : ' · not validated since up');
    $('graph').setAttribute('data-ready', 'true');
    if (state.selected) refreshSelected();
  }

  function loadGraph() {
    if (!state.lab) return Promise.resolve();
    return api('GET', '/api/labs/' + state.lab + '/graph').then(draw).catch(function (e) { say(e.message); });
  }
  var pending = null;
  function graphSoon() {  // events come in bursts: one fetch per burst
    if (pending) return;
    pending = setTimeout(function () { pending = null; loadGraph(); }, 250);
  }

  // ---- what is clicked -------------------------------------------------------------------
  // A failing test's row opens its evidence (what the validator expected and observed).
  function failuresHtml(fs) {
    if (!fs || !fs.length) return '<p class="ok">No failing test here in the last validation.</p>';
    return '<table class="failures">' + fs.map(function (f) {
      return '<tr class="failure" title="click for the evidence"><td class="bad">' + esc(f.test) + '</td><td>' + esc(f.message) +
        '<div class="evidence" hidden>expected: ' + esc(f.expected) + '<br>observed: ' + esc(f.observed) + '</div></td></tr>';
    }).join('') + '</table>';
  }
  function causesHtml(cs) {
    if (!cs || !cs.length) return '';
    return '<h3>Likely causes</h3>' + cs.map(function (c) {
      return '<div class="cause"><p class="warn">' + esc(c.cause) + '</p><pre>' + (c.evidence || []).map(esc).join('\n') + '</pre></div>';
    }).join('');
  }
  function wireFailures() {
    Array.prototype.forEach.call(document.querySelectorAll('#detail tr.failure'), function (tr) {
      tr.onclick = function () { var e = tr.querySelector('.evidence'); e.hidden = !e.hidden; };
    });
  }
  function causesFor(nodes) {
    var v = state.graph && state.graph.validation;
    if (!v || !v.likely_causes) return [];
    return v.likely_causes.filter(function (c) { return nodes.every(function (n) { return c.nodes.indexOf(n) >= 0; }); });
  }
  function select(kind, d) {
    state.selected = kind + ':' + (kind === 'node' ? d.name : d.id);
    draw(state.graph);
  }
  function refreshSelected() {
    var sel = state.selected, g = state.graph;
    if (sel.indexOf('link:') === 0) {
      var id = sel.slice(5), l = g.links.filter(function (x) { return x.id === id; })[0];
      if (!l) return;
      $('detail').innerHTML = '<h2>' + esc(l.a + ':' + l.a_interface + ' — ' + l.b + ':' + l.b_interface) + '</h2>' +
        '<p>state <b class="' + (l.state === 'up' ? 'ok' : 'bad') + '">' + esc(l.state || 'unknown') + '</b>, MTU ' + l.mtu +
        ' planned (' + esc(l.a_mtu) + ' / ' + esc(l.b_mtu) + ' in the kernel), oper ' + esc(l.a_oper) + ' / ' + esc(l.b_oper) + '</p>' +
        (l.notes.length ? '<p class="warn">' + l.notes.map(esc).join('<br>') + '</p>' : '') +
        '<h3>Sessions</h3><ul>' + l.sessions.map(function (s) { return '<li>' + esc(s) + '</li>'; }).join('') + '</ul>' +
        '<h3>Failing tests</h3>' + failuresHtml(l.failures) + causesHtml(causesFor([l.a, l.b]));
      wireFailures();
      return;
    }
    var name = sel.slice(5);
    api('GET', '/api/labs/' + state.lab + '/nodes/' + name).then(function (n) {
      if (state.selected !== sel) return;
      var h = '<h2>' + esc(n.name) + '</h2><p>' + esc(n.kind) + (n.asn ? ', AS ' + n.asn : '') +
        (n.router_id ? ', router-id ' + esc(n.router_id) : '') + '; daemons ' + esc(n.daemons.join(', ')) + '</p>';
      h += '<h3>Interfaces</h3><table><tr><th>name</th><th>peer</th><th>state</th><th>MTU</th></tr>' +
        n.interfaces.map(function (i) {
          var peer = i.segment ? 'segment ' + i.segment + ': ' + i.segment_peers.join(', ') : i.peer;
          return '<tr><td>' + esc(i.name) + '</td><td>' + esc(peer) + '</td><td class="' +
            (i.operstate === 'UP' ? 'ok' : 'bad') + '">' + esc(i.operstate) + '</td><td>' + esc(i.mtu) +
            (i.mtu !== i.mtu_planned ? ' <span class="warn">(' + i.mtu_planned + ' planned)</span>' : '') + '</td></tr>';
        }).join('') + '</table>';
      if (n.sessions) h += '<h3>Sessions</h3><table>' + n.sessions.map(function (s) {
        return '<tr><td>' + esc(s.protocol) + '</td><td>' + esc(s.interface) + ' → ' + esc(s.peer) +
          '</td><td class="' + (s.up ? 'ok' : 'bad') + '">' + esc(s.state) + '</td></tr>';
      }).join('') + '</table>';
      h += '<h3>Failing tests</h3>' + failuresHtml(n.failing_tests) + causesHtml(n.likely_causes);
      if (n.routes) h += '<h3>Routes (' + n.routes.length + ')</h3><table>' + n.routes.slice(0, 200).map(function (r) {
        return '<tr><td>' + esc(r.prefix) + '</td><td>' + esc(r.protocol) + '</td><td>' + esc(r.nexthops.join(', ')) + '</td></tr>';
      }).join('') + '</table>';
      h += '<p><button id="open-term" title="twin shell ' + esc(n.name) + ': a root shell in the node">Terminal</button></p>';
      h += '<h3>Run in ' + esc(n.name) + '</h3><form id="exec"><input id="cmd" size="40" value="vtysh -c \'show bgp summary\'">' +
        ' <button>Run</button></form><pre id="out"></pre>';
      $('detail').innerHTML = h;
      $('open-term').onclick = function () { openTerminal(n.name); };
      wireFailures();
      $('exec').onsubmit = function (ev) {
        ev.preventDefault();
        var argv = ['sh', '-c', $('cmd').value];
        $('out').textContent = '…';
        api('POST', '/api/labs/' + state.lab + '/nodes/' + n.name + '/exec', { command: argv })
          .then(function (r) { $('out').textContent = r.stdout + r.stderr + (r.exit_code ? '\n(exit ' + r.exit_code + ')' : ''); })
          .catch(function (e) { $('out').textContent = e.message; });
      };
    }).catch(function (e) { say(e.message); });
  }

  // ---- terminal: `twin shell NODE` in a pty on the server, bytes over a WebSocket ----------
  function closeTerminal() {
    if (!state.term) return;
    state.term.ws.onclose = null;
    state.term.ws.close();
    state.term.term.destroy();
    state.term = null;
    $('term').innerHTML = '';
    $('term-panel').hidden = true;
    if (state.graph) { var g = state.graph; state.graph = null; draw(g); }
  }
  function openTerminal(node, retried) {
    closeTerminal();
    if (!window.Terminal) {
      say('the browser terminal was not built (esbuild and node-xterm: tools/install-deps.sh, then rebuild)');
      return;
    }
    $('term-panel').hidden = false;
    $('term-title').textContent = 'twin shell --lab ' + state.lab + ' ' + node;
    // The DOM renderer keeps the screen's text in the page (readable by tests and screen readers).
    var term = new Terminal({ cursorBlink: true, fontSize: 13, rendererType: 'dom' });
    term.open($('term'));
    term.fit();
    var url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/api/labs/' + state.lab +
      '/nodes/' + node + '/terminal' + (state.token ? '?token=' + encodeURIComponent(state.token) : '');
    var ws = new WebSocket(url), opened = false, enc = new TextEncoder(), dec = new TextDecoder();
    ws.binaryType = 'arraybuffer';
    state.term = { term: term, ws: ws, node: node };
    var size = function () { if (ws.readyState === 1) ws.send(JSON.stringify({ cols: term.cols, rows: term.rows })); };
    ws.onopen = function () { opened = true; size(); term.focus(); };
    ws.onmessage = function (m) {
      term.write(typeof m.data === 'string' ? m.data : dec.decode(new Uint8Array(m.data), { stream: true }));
    };
    term.on('data', function (d) { if (ws.readyState === 1) ws.send(enc.encode(d)); });
    term.on('resize', size);
    ws.onclose = function () {
      // A refused upgrade shows only as a close before open: most likely the token.
      if (!opened && !retried) {
        var t = window.prompt('A terminal needs this server\'s token (twin serve --token-file):');
        if (t) { state.token = t; sessionStorage.setItem('twin-token', t); openTerminal(node, true); return; }
      }
      term.write('\r\n[terminal closed]\r\n');
    };
    if (state.graph) { var g = state.graph; state.graph = null; draw(g); }
  }
  $('term-close').onclick = closeTerminal;

  // ---- events and history ----------------------------------------------------------------
  function eventText(e) {
    var t = (e.time || '').slice(11, 19) + ' ' + e.kind + ' ';
    if (e.subject) return t + e.subject + ': ' + e.from + ' → ' + e.to;
    if (e.kind === 'validate') return t + e.passed + ' passed, ' + e.failed + ' failed, ' + e.errors + ' errors';
    if (e.verdict) return t + e.verdict + (e.scenario ? ' (' + e.scenario + ')' : '');
    if (e.kind === 'up') return t + (e.ok ? e.nodes + ' nodes, ' + e.links + ' links' : 'failed: ' + e.error);
    if (e.kind === 'down') return t + (e.ok ? 'removed' : 'left something');
    if (e.kind === 'drill') return t + (e.exit_code === 0 ? 'passed' : 'failed');
    return t;
  }
  function addEvent(e) {
    var li = document.createElement('li');
    li.textContent = eventText(e);
    li.className = /down|exited|missing|Idle|Active|Connect/.test(e.to || '') ? 'bad' : '';
    $('events').insertBefore(li, $('events').firstChild);
    while ($('events').childNodes.length > 200) $('events').removeChild($('events').lastChild);
  }
  function connect() {
    if (state.ws) state.ws.close();
    var url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/api/labs/' + state.lab +
      '/events' + (state.token ? '?token=' + encodeURIComponent(state.token) : '');
    var ws = new WebSocket(url), lab = state.lab;
    state.ws = ws;
    ws.onmessage = function (m) {
      var e = JSON.parse(m.data);
      if (e.kind === 'hello') return;
      if (e.kind === 'gone') { say('lab ' + lab + ' is not running'); return; }
      addEvent(e);
      graphSoon();
      if (!e.live) loadHistory();
    };
    ws.onclose = function () { if (state.ws === ws) setTimeout(connect, 2000); };
  }
  function loadHistory() {
    api('GET', '/api/labs/' + state.lab + '/history').then(function (h) {
      var ol = $('history');
      ol.innerHTML = '';
      h.events.slice().reverse().forEach(function (e) {
        var li = document.createElement('li');
        li.textContent = eventText(e) + (e.source ? ' · ' + e.source : '');
        if (e.report) li.onclick = function () { showReport(e); };
        ol.appendChild(li);
      });
    });
  }
  function showReport(e) {
    api('GET', '/api/labs/' + state.lab + '/' + e.report).then(function (r) {
      var h = '<h2>' + esc(e.kind) + ' at ' + esc(e.time) + '</h2>';
      if (r.verdict && typeof r.verdict === 'string') h += '<p>verdict <b>' + esc(r.verdict) + '</b></p>';
      (r.reasons || []).forEach(function (x) {
        h += '<p class="bad">' + esc(x.message) + '</p>';
        (x.causes || []).forEach(function (c) { h += '<p class="warn">likely cause: ' + esc(c.text) + '</p>'; });
      });
      (r.likely_causes || []).forEach(function (c) { h += '<p class="warn">likely cause: ' + esc(c.cause) + '</p>'; });
      var fails = (r.results || (r.after && r.after.results) || []).filter(function (t) { return t.status !== 'passed' && t.status !== 'skipped'; });
      h += '<h3>Not passing (' + fails.length + ')</h3><table>' + fails.slice(0, 300).map(function (t) {
        return '<tr><td class="bad">' + esc(t.validator + '.' + t.test_name) + '</td><td>' + esc(t.node) + ' ' + esc(t.peer) +
          '</td><td>' + esc(t.message) + '</td></tr>';
      }).join('') + '</table>';
      $('detail').innerHTML = h;
    }).catch(function (err) { say(err.message); });
  }

  // ---- labs --------------------------------------------------------------------------------
  function chooseLab(lab) {
    state.lab = lab;
    state.graph = null;
    state.selected = null;
    $('events').innerHTML = '';
    history.replaceState(null, '', '#' + lab);
    loadGraph();
    loadHistory();
    connect();
  }
  function loadLabs() {
    return api('GET', '/api/labs').then(function (l) {
      var sel = $('lab');
      sel.innerHTML = '';
      l.running.forEach(function (x) {
        var o = document.createElement('option');
        o.value = o.textContent = x.name;
        sel.appendChild(o);
      });
      if (!l.running.length) { say('no lab is running: twin up TOPOLOGY, or POST /api/labs'); return; }
      var want = location.hash.slice(1);
      var pick = l.running.some(function (x) { return x.name === want; }) ? want : l.running[0].name;
      sel.value = pick;
      chooseLab(pick);
    });
  }
  $('lab').onchange = function () { chooseLab($('lab').value); };
  $('validate').onclick = function () {
    if (!state.lab) return;
    say('validating ' + state.lab + '…');
    api('POST', '/api/labs/' + state.lab + '/validate', {}).then(function (job) {
      var poll = function () {
        api('GET', '/api/jobs/' + job.id).then(function (j) {
          if (j.state === 'running') { say(j.progress.slice(-1)[0] || 'validating…'); setTimeout(poll, 500); return; }
          say('validation ' + j.state + (j.result && j.result.summary ? ': ' + j.result.summary.passed + ' passed, ' +
            j.result.summary.failed + ' failed' : ''));
          loadGraph();
        });
      };
      poll();
    }).catch(function (e) { say(e.message); });
  };
  window.addEventListener('resize', function () {
    if (state.term) state.term.term.fit();
    if (state.graph) { var g = state.graph; state.graph = null; draw(g); }
  });
  loadLabs().catch(function (e) { say(e.message); });
})();
