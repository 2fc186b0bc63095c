// twin's web page: the fabric as a graph (d3 3.5 from Debian's libjs-d3), live over the lab's
// event stream, a panel for what is clicked, the lab's history. Everything comes from the
// server's API (/api/openapi.json); nothing is loaded from anywhere else.
'use strict';
(function () {
  var state = { lab: null, graph: null, ws: null, selected: null, token: sessionStorage.getItem('twin-token') || '',
    // Link utilisation: id -> {bps, ab, ba, util (null: unshaped)}; mode 'live' while a traffic
    // job runs, 'report' from a finished run's report (kept until the graph changes or a click
    // on the background); sig: the graph's links and states when a report's colours were set.
    util: null, utilMode: null, utilNote: '', utilSig: '', traffic: null };
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
  // A click on the background (not a node or link) puts the last run's colours away.
  svg.on('click', function () {
    if (d3.event.target === svg.node() && state.utilMode === 'report') clearUtil();
  });

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
    var u = state.util && state.util[l.id];
    if (u && l.state !== 'down') c += ' util u' + utilBucket(u);
    return c;
  }
  // Bits per second as people read them: 3 significant digits, SI prefixes (k = 1000).
  function fmtRate(bps) {
    if (bps === null || bps === undefined) return '?';
    var units = [[1e9, 'Gbit/s'], [1e6, 'Mbit/s'], [1e3, 'kbit/s']];
    for (var i = 0; i < units.length; ++i)
      if (bps >= units[i][0]) return (bps / units[i][0]).toPrecision(3) + ' ' + units[i][1];
    return Math.round(bps) + ' bit/s';
  }
  function pct(x) { return (100 * x).toFixed(x < 0.1 ? 1 : 0) + ' %'; }
  // Buckets: a shaped link by its share of its rate, an unshaped one by its absolute rate.
  var kUtilSteps = [0.01, 0.25, 0.5, 0.75, 0.9];
  var kRateSteps = [1e6, 1e7, 1e8, 1e9, 1e10];
  function utilBucket(u) {
    var steps = u.util !== null ? kUtilSteps : kRateSteps, x = u.util !== null ? u.util : u.bps, b = 0;
    while (b < steps.length && x >= steps[b]) ++b;
    return b;
  }
  function utilText(u) {
    if (!u) return '';
    return fmtRate(u.bps) + (u.util !== null ? ' (' + pct(u.util) + ' of its rate)' : ' (unshaped)');
  }
  function linkTitle(l) {
    var u = state.util && state.util[l.id];
    return l.a + ':' + l.a_interface + ' — ' + l.b + ':' + l.b_interface + ' MTU ' + l.mtu +
      (l.bandwidth_bps ? ' · rate ' + fmtRate(l.bandwidth_bps) : ' · unshaped') +
      (u ? '\n' + (state.utilMode === 'live' ? 'now ' : 'run average ') + utilText(u) : '') +
      (l.notes.length ? '\n' + l.notes.join('\n') : '');
  }
  function nodeClass(n) {
    return 'node ' + (n.state || '') + (n.failures.length ? ' failing' : '');
  }

  function linkSignature(g) {
    return g.lab + '|' + g.links.map(function (l) { return l.id + '=' + l.state; }).join(',');
  }
  function draw(g) {
    // A finished run's colours stay until the graph changes (a link's state, another lab).
    if (state.utilMode === 'report' && state.utilSig !== linkSignature(g)) clearUtil(true);
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
    links.attr('data-link', function (l) { return l.id; })
      .attr('data-state', function (l) { return l.state; });
    paintLinks(links);
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

  // Link colours, data attributes and titles from state.util, without a new layout.
  function paintLinks(links) {
    links = links || linkLayer.selectAll('line.link');
    links.attr('class', function (l) { return linkClass(l) + (state.selected === 'link:' + l.id ? ' selected' : ''); })
      .attr('data-util', function (l) {
        var u = state.util && state.util[l.id];
        return u ? (u.util !== null ? u.util.toFixed(4) : 'unshaped') : null;
      })
      .attr('data-bps', function (l) { var u = state.util && state.util[l.id]; return u ? Math.round(u.bps) : null; });
    links.select('title').text(linkTitle);
    drawLegend();
  }
  function drawLegend() {
    var el = $('legend');
    if (!state.util || !state.graph) { el.hidden = true; el.innerHTML = ''; return; }
    var shaped = state.graph.links.some(function (l) { return l.bandwidth_bps > 0; });
    var unshaped = state.graph.links.some(function (l) { return !l.bandwidth_bps; });
    var row = function (steps, label) {
      var names = [label(0, steps[0], true)];
      for (var i = 1; i < steps.length; ++i) names.push(label(steps[i - 1], steps[i]));
      names.push('≥ ' + label(steps[steps.length - 1]));
      return names.map(function (n, i) { return '<span class="sw u' + i + '"></span>' + esc(n); }).join('');
    };
    var h = '<b>' + esc(state.utilMode === 'live' ? 'link utilisation, now' : 'link utilisation, run average') + '</b>' +
      (state.utilNote ? ' · ' + esc(state.utilNote) : '');
    if (shaped) h += '<div>of the link\'s rate:' + row(kUtilSteps, function (a, b, first) {
      return b === undefined ? pct(a) : first ? '< ' + pct(b) : pct(a) + '–' + pct(b);
    }) + '</div>';
    if (unshaped) h += '<div>' + (shaped ? 'unshaped links, bit/s: ' : 'bit/s (no link rates): ') + row(kRateSteps, function (a, b, first) {
      var si = function (x) { return x >= 1e9 ? x / 1e9 + 'G' : x >= 1e6 ? x / 1e6 + 'M' : x / 1e3 + 'k'; };
      return b === undefined ? si(a) : first ? '< ' + si(b) : si(a) + '–' + si(b);
    }) + '</div>';
    el.innerHTML = h;
    el.hidden = false;
  }
  function clearUtil(quiet) {
    state.util = null;
    state.utilMode = null;
    state.utilNote = '';
    if (!quiet && state.graph) paintLinks();
    else drawLegend();
  }
  function setUtil(util, mode, note) {
    state.util = util;
    state.utilMode = mode;
    state.utilNote = note || '';
    if (mode === 'report' && state.graph) state.utilSig = linkSignature(state.graph);
    if (!state.graph) return;
    paintLinks();
    if (state.selected && state.selected.indexOf('link:') === 0) refreshSelected();
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
        linkTrafficHtml(l) +
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

  function linkTrafficHtml(l) {
    var u = state.util && state.util[l.id];
    var h = '<p>rate ' + (l.bandwidth_bps ? '<b>' + esc(fmtRate(l.bandwidth_bps)) + '</b> (each end shaped to it)' : 'unshaped');
    if (l.a_tx_bytes !== null && l.a_tx_bytes !== undefined)
      h += '; sent since up: ' + esc(l.a + ':' + l.a_interface) + ' ' + esc(l.a_tx_bytes) + ' B, ' +
        esc(l.b + ':' + l.b_interface) + ' ' + esc(l.b_tx_bytes) + ' B';
    h += '</p>';
    if (u) h += '<p class="util-now">' + esc(state.utilMode === 'live' ? 'utilisation now: ' : 'utilisation, run average: ') +
      '<b>' + esc(utilText(u)) + '</b><br>' + esc(l.a + ' → ' + l.b) + ' ' + esc(fmtRate(u.ab)) + ', ' +
      esc(l.b + ' → ' + l.a) + ' ' + esc(fmtRate(u.ba)) + '</p>';
    return h;
  }

  // ---- traffic: twin traffic as a job; live utilisation from the ports' counters -----------
  // Each link's bits/s between two reads of the lab's status (its ports' byte counters, one
  // netlink dump per node, no FRR query), over the server's read times: the busier direction,
  // as a share of the link's rate when it has one.
  function linkRates(prev, cur) {
    var dt = (cur.read_at_ms - prev.read_at_ms) / 1000;
    if (!(dt > 0)) return null;
    var before = {}, out = {}, rates = {};
    prev.links.forEach(function (l) { before[l.a] = l; });
    if (state.graph) state.graph.links.forEach(function (l) { rates[l.id] = l.bandwidth_bps; });
    cur.links.forEach(function (l) {
      var p = before[l.a];
      if (!p) return;
      var d = function (k) {
        var x = l[k], y = p[k];
        return typeof x === 'number' && typeof y === 'number' && x >= y ? (x - y) * 8 / dt : null;
      };
      var ab = d('a_tx_bytes'), ba = d('b_tx_bytes');
      if (ab === null) ab = d('b_rx_bytes');
      if (ba === null) ba = d('a_rx_bytes');
      if (ab === null && ba === null) return;
      var bps = Math.max(ab || 0, ba || 0), rate = l.bandwidth_bps || rates[l.a] || 0;
      out[l.a] = { bps: bps, ab: ab || 0, ba: ba || 0, util: rate ? bps / rate : null };
    });
    return out;
  }
  // The seconds a run's port counters span (read after the clients' -O seconds and after they
  // ended); a report without it: its measured seconds.
  function sendSeconds(r) { return r.counters_s || r.duration_s || 1; }
  // A finished run's colours: each port's bytes over the seconds its counters span (the
  // report's ports: those that sent), the busier end of each link.
  function reportUtil(r) {
    var out = {}, secs = sendSeconds(r);
    if (!state.graph) return out;
    var ports = {};
    (r.ports || []).forEach(function (p) { ports[p.node + ':' + p.port] = p; });
    state.graph.links.forEach(function (l) {
      var a = ports[l.a + ':' + l.a_interface], b = ports[l.b + ':' + l.b_interface];
      var ab = a ? a.tx_bytes * 8 / secs : 0, ba = b ? b.tx_bytes * 8 / secs : 0, bps = Math.max(ab, ba);
      out[l.id] = { bps: bps, ab: ab, ba: ba, util: l.bandwidth_bps ? bps / l.bandwidth_bps : null };
    });
    return out;
  }
  function startTraffic() {
    if (!state.lab || (state.traffic && state.traffic.running)) return;
    var lab = state.lab, pattern = $('traffic-pattern').value, secs = parseInt($('traffic-duration').value, 10);
    if (!(secs >= 1)) { say('traffic: the duration is whole seconds, 1 or more'); return; }
    var t = { lab: lab, running: true, prev: null, timer: null };
    state.traffic = t;
    $('traffic').disabled = true;
    say('traffic ' + pattern + ' on ' + lab + ' (' + secs + ' s)…');
    var sample = function () {
      if (!t.running || state.lab !== lab) return;
      api('GET', '/api/labs/' + lab).then(function (st) {
        if (!t.running || state.lab !== lab) return;
        if (t.prev) {
          var u = linkRates(t.prev, st);
          if (u) setUtil(u, 'live', pattern + ' running');
        }
        t.prev = st;
      }).catch(function () {}).then(function () {
        if (t.running) t.timer = setTimeout(sample, 1000);
      });
    };
    var finish = function (text) {
      t.running = false;
      clearTimeout(t.timer);
      $('traffic').disabled = false;
      say(text);
    };
    api('POST', '/api/labs/' + lab + '/traffic', { pattern: pattern, duration: secs + 's' }).then(function (job) {
      sample();
      var poll = function () {
        api('GET', '/api/jobs/' + job.id).then(function (j) {
          if (j.state === 'running') { say(j.progress.slice(-1)[0] || 'traffic…'); setTimeout(poll, 500); return; }
          var r = j.result;
          if (!r || !r.flows) {
            finish('traffic ' + j.state + (r && r.error ? ': ' + (r.error.message || r.error) : '') +
              (j.progress.length ? ' — ' + j.progress.slice(-1)[0] : ''));
            if (state.utilMode === 'live') clearUtil();
            return;
          }
          finish('traffic ' + r.pattern + ' ' + j.state + ': ' + fmtRate(r.aggregate_bps) + ' aggregate, slowest pair ' +
            r.slowest_ratio.toFixed(2) + ' of its fair share');
          if (state.lab !== lab) return;
          showTraffic(r, 'traffic ' + r.pattern + ' (job ' + j.id + ')');
        }).catch(function (e) { finish(e.message); });
      };
      poll();
    }).catch(function (e) { finish(e.message); });
  }
  $('traffic').onclick = startTraffic;

  // The report: colours over the graph, and its tables in the detail panel.
  function showTraffic(r, title) {
    state.selected = null;
    setUtil(reportUtil(r), 'report', r.pattern + ', over the ' + sendSeconds(r) + ' s its clients sent');
    $('detail').innerHTML = trafficHtml(r, title);
  }
  function trafficHtml(r, title) {
    var udp = r.protocol === 'udp';
    var h = '<h2>' + esc(title) + '</h2><p>' + esc(r.pairs) + ' pairs × ' + esc(r.flows_per_pair) + ' ' + esc(r.protocol) +
      ' flow(s), ' + esc(r.duration_s) + ' s; ECMP hashing ' + esc(r.hash_policy) + '</p>';
    var s = r.slowest;
    h += '<table class="traffic-summary">' +
      '<tr><th>aggregate</th><td>' + esc(fmtRate(r.aggregate_bps)) + '</td></tr>' +
      (s ? '<tr><th>slowest pair</th><td>' + esc(s.src + ' → ' + s.dst) + ': ' + esc(fmtRate(s.bps)) +
        ' (fair share ' + esc(fmtRate(s.fair_bps)) + ')</td></tr>' : '') +
      '<tr><th>slowest ÷ fair share</th><td class="' + (r.slowest_ratio < 0.5 ? 'bad' : 'ok') + '">' +
        esc(r.slowest_ratio.toFixed(2)) + ' (fair share from ' + esc(r.fair_basis) + ')</td></tr>' +
      '<tr><th>drops</th><td>' + esc(r.drops.shaped_ports) + ' at shaped ports, ' +
        esc(r.drops.unshaped_ports) + ' at unshaped ones</td></tr>' +
      '<tr><th>latency p50 / p99</th><td>' + esc(r.latency.unloaded.p50_ms.toFixed(2)) + ' / ' +
        esc(r.latency.unloaded.p99_ms.toFixed(2)) + ' ms unloaded, ' + esc(r.latency.loaded.p50_ms.toFixed(2)) + ' / ' +
        esc(r.latency.loaded.p99_ms.toFixed(2)) + ' ms under load</td></tr></table>';
    (r.problems || []).forEach(function (p) { h += '<p class="bad">' + esc(p) + '</p>'; });
    // Flows, slowest first; the slowest flow and the slowest pair's flows flagged.
    var flows = (r.flows || []).slice().sort(function (a, b) { return (a.error ? -1 : a.bps) - (b.error ? -1 : b.bps); });
    var slowestFlow = flows.filter(function (f) { return !f.error; })[0];
    h += '<h3>Flows (' + flows.length + ')</h3><table class="traffic-flows"><thead><tr><th>source</th><th>destination</th>' +
      '<th class="num">throughput</th><th class="num">fair share</th><th class="num" title="' +
      (udp ? 'datagrams lost / sent' : 'TCP retransmits') + '">' + (udp ? 'lost' : 'retr.') + '</th></tr></thead><tbody>' + flows.map(function (f) {
        var inSlowPair = s && f.pair === s.pair, isSlowest = f === slowestFlow;
        return '<tr class="flow' + (isSlowest || inSlowPair ? ' slowest' : '') + '" data-bps="' + esc(f.error ? 0 : Math.round(f.bps)) + '">' +
          '<td>' + esc(f.src) + '</td><td>' + esc(f.dst) +
          (isSlowest ? ' <span class="tag">slowest</span>' : '') + (inSlowPair ? ' <span class="tag">slowest pair</span>' : '') + '</td>' +
          (f.error ? '<td colspan="3" class="bad">' + esc(f.error) + '</td>'
            : '<td class="num">' + esc(fmtRate(f.bps)) + '</td><td class="num">' + esc(f.fair_bps ? fmtRate(f.fair_bps) : '—') +
              '</td><td class="num">' + esc(udp ? f.lost + '/' + f.packets : f.retransmits) + '</td>') + '</tr>';
      }).join('') + '</tbody></table>';
    // ECMP balance: each group's members with their share of its bytes.
    var groups = r.ecmp_groups || [];
    h += '<h3>ECMP balance (' + groups.length + ' groups)</h3>';
    if (!groups.length) h += '<p class="hint">No pair\'s path splits over an ECMP group.</p>';
    else h += '<table class="traffic-groups"><thead><tr><th>node</th><th>members: share of the bytes</th>' +
      '<th class="num">max/min</th><th class="num">CV</th></tr></thead><tbody>' + groups.map(function (g) {
        var total = g.tx_bytes.reduce(function (a, b) { return a + b; }, 0);
        var members = g.ports.map(function (p, i) {
          var idle = g.idle.indexOf(p) >= 0;
          return '<span class="member' + (idle ? ' bad' : '') + '">' + esc(p) + ' ' +
            esc(total ? pct(g.tx_bytes[i] / total) : '0 %') + (idle ? ' <span class="tag">idle</span>' : '') + '</span>';
        }).join('<br>');
        return '<tr class="group' + (g.idle.length ? ' bad' : '') + '"><td>' + esc(g.node) + '</td><td>' + members +
          '</td><td class="num">' + esc(g.max_min ? g.max_min.toFixed(2) : '∞ (idle member)') + '</td><td class="num">' +
          esc(g.cv.toFixed(3)) + '</td></tr>';
      }).join('') + '</tbody></table>';
    // The busiest ports.
    var ports = (r.ports || []).slice().sort(function (a, b) { return b.tx_bytes - a.tx_bytes; });
    var secs = sendSeconds(r);
    h += '<h3>Ports that sent (' + ports.length + ')</h3><p class="hint">average over the ' + esc(secs) +
      ' s the clients sent</p><table class="traffic-ports"><thead><tr><th>port</th>' +
      '<th class="num">average</th><th class="num">of its rate</th><th class="num">drops</th></tr></thead><tbody>' +
      ports.slice(0, 60).map(function (p) {
        var bps = p.tx_bytes * 8 / secs;
        return '<tr><td>' + esc(p.node + ':' + p.port) + ' → ' + esc(p.peer) + (p.bottleneck ? ' <span class="tag">bottleneck</span>' : '') +
          '</td><td class="num">' + esc(fmtRate(bps)) + '</td><td class="num">' +
          esc(p.rate_bps ? pct(bps / p.rate_bps) : 'unshaped') + '</td><td class="num">' + esc(p.drops) + '</td></tr>';
      }).join('') + '</tbody></table>';
    return h;
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
    if (e.kind === 'traffic') return t + e.pattern + ': ' + fmtRate(e.aggregate_bps) + ', slowest ' +
      (typeof e.slowest_ratio === 'number' ? e.slowest_ratio.toFixed(2) : '?') + ' of fair';
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
      if (e.kind === 'traffic' && r.flows) { showTraffic(r, 'traffic ' + r.pattern + ' at ' + e.time); return; }
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
    if (state.traffic) { state.traffic.running = false; clearTimeout(state.traffic.timer); $('traffic').disabled = false; }
    state.traffic = null;
    clearUtil(true);
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
