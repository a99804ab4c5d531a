// The topology page: draws the server's capped graph with cytoscape.js (clusters as shaded compound
// nodes, laid out by fcose), labels as many nodes as fit without two labels touching, and switches
// between the drawing and the list of clusters. The side panel is an HTMX fragment for the node picked.
(function () {
  "use strict";

  const TYPE_COLOURS = {
    person: "#4f46e5", organization: "#0ea5e9", location: "#10b981", concept: "#94a3b8",
    technology: "#f59e0b", product: "#ec4899", event: "#ef4444", work: "#8b5cf6", group: "#14b8a6",
  };
  const TIER_COLOURS = { hot: "#e8590c", warm: "#d4a106", archive: "#64748b" };
  // Pale tints for the clusters' shaded areas: they must not compete with the type colours.
  const CLUSTER_TINTS = ["#e0e7ff", "#d1fae5", "#ffedd5", "#fce7f3", "#e0f2fe", "#fef9c3", "#ede9fe", "#ccfbf1"];
  // A pair or a single node is not worth a shaded area of its own.
  const MIN_CLUSTER = 3;
  // Labels are this size on screen whatever the zoom, so a label is readable as soon as it shows.
  const LABEL_PX = 12;
  const LABEL_MAX_PX = 160;
  // Past this many candidates, labelling costs more than it shows: the rest are never labelled at
  // first paint (a few hundred labels do not fit on any screen anyway).
  const LABEL_CANDIDATES = 300;
  // fcose's spectral start and force refinement read well up to a few thousand nodes; past this the
  // refinement is left out ("draft"), which keeps 2,000 nodes to about a second.
  const PROOF_NODES = 800;
  const NARROW = "(max-width: 640px)";
  const MODE_KEY = "kybernesis.graphMode";

  function elements(data) {
    const entityView = data.view === "entities";
    const sizes = Object.fromEntries(data.clusters.map((c) => [c.id, c.size]));
    const shaded = entityView ? data.clusters.filter((c) => c.size >= MIN_CLUSTER) : [];
    const compounds = shaded.map((c, i) => ({
      group: "nodes", classes: "cluster",
      data: { id: "c:" + c.id, kind: "cluster", label: "", tint: CLUSTER_TINTS[i % CLUSTER_TINTS.length] },
    }));
    const nodes = data.nodes.map((n) => {
      const parent = entityView ? (n.cluster && sizes[n.cluster] >= MIN_CLUSTER ? "c:" + n.cluster : undefined) : (n.parent || undefined);
      return {
        group: "nodes", classes: n.isolated ? "isolated" : "",
        data: {
          id: n.id, kind: n.kind, label: n.label, parent,
          entityId: n.entityId, memoryId: n.memoryId,
          colour: n.kind === "entity" ? (TYPE_COLOURS[n.type] || "#94a3b8") : (TIER_COLOURS[n.type] || "#6366f1"),
          size: n.kind === "entity" ? 16 + 44 * (n.salience || 0) : 22,
        },
      };
    });
    const edges = data.edges.map((e) => ({
      group: "edges",
      data: {
        id: e.id, source: e.source, target: e.target, weight: e.weight,
        label: (e.relationType || e.reason || "").replace(/_/g, " "),
        width: 1 + 5 * e.weight,
      },
    }));
    return compounds.concat(nodes, edges);
  }

  function style() {
    return [
      { selector: "node", style: {
        "background-color": "data(colour)", width: "data(size)", height: "data(size)", label: "",
        "font-size": LABEL_PX, color: "#1d2330", "text-valign": "bottom", "text-margin-y": 2,
        "text-wrap": "ellipsis", "text-max-width": LABEL_MAX_PX,
        "text-outline-color": "#fff", "text-outline-width": 2 } },
      { selector: "node.labelled", style: { label: "data(label)", "z-index": 5 } },
      { selector: "node.isolated", style: { display: "none" } },
      { selector: "node.isolated.shown", style: { display: "element" } },
      { selector: "node[kind = 'cluster']", style: {
        "background-color": "data(tint)", "background-opacity": 0.55, "border-width": 0,
        shape: "round-rectangle", padding: 12 } },
      { selector: "node[kind = 'tag']", style: {
        "background-color": "#eef2ff", "background-opacity": 0.55, "border-color": "#c7d2fe", "border-width": 1,
        shape: "round-rectangle", "text-valign": "top", color: "#3730a3", "font-weight": 600 } },
      { selector: "node[kind = 'memory']", style: { "font-weight": 500 } },
      { selector: "edge", style: {
        width: "data(width)", "line-color": "#cbd5e1", "curve-style": "haystack", opacity: 0.8 } },
      { selector: "edge.hover", style: {
        label: "data(label)", "font-size": 10, "line-color": "#6366f1", color: "#3730a3",
        "text-background-color": "#fff", "text-background-opacity": 1, "text-background-padding": 2,
        "curve-style": "bezier", "z-index": 10 } },
      { selector: "node:selected", style: { "border-width": 3, "border-color": "#111827" } },
    ];
  }

  // A seeded stand-in for Math.random while fcose runs: the same graph is drawn the same way on every
  // load, so a person finds things where they were, and the browser tests see one drawing.
  function seeded(seed) {
    return function () {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  function placeIsolated(alone, placed) {
    // Nodes without an edge go round the drawn components on a sunflower spiral (even density, no
    // overlap), most salient nearest, rather than in a block of their own below them.
    if (alone.empty()) return;
    const box = placed.nonempty() ? placed.boundingBox() : { x1: 0, y1: 0, x2: 0, y2: 0, w: 0, h: 0 };
    const cx = (box.x1 + box.x2) / 2, cy0 = (box.y1 + box.y2) / 2;
    const sorted = alone.sort((a, b) => b.data("size") - a.data("size"));
    const spacing = Math.max(...sorted.map((n) => n.data("size"))) * 0.9 + 8;
    const inner = placed.nonempty() ? Math.max(box.w, box.h) / 2 + spacing : 0;
    const offset = (inner / spacing) ** 2;
    sorted.forEach((node, i) => {
      const radius = spacing * Math.sqrt(i + offset);
      const angle = i * 2.39996;  // the golden angle
      node.position({ x: cx + radius * Math.cos(angle), y: cy0 + radius * Math.sin(angle) });
    });
  }

  function labelBox(node) {
    return node.boundingBox({ includeNodes: false, includeEdges: false, includeLabels: true, includeOverlays: false });
  }

  function intersects(a, b) {
    return a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2;
  }

  function within(a, b) {
    return a.x1 >= b.x1 && a.x2 <= b.x2 && a.y1 >= b.y1 && a.y2 <= b.y2;
  }

  // Where a label may go, in order of preference: under its node, above it, to the right, to the left.
  const SPOTS = [
    { "text-valign": "bottom", "text-halign": "center" },
    { "text-valign": "top", "text-halign": "center" },
    { "text-valign": "center", "text-halign": "right" },
    { "text-valign": "center", "text-halign": "left" },
  ];

  function placeLabels(cy) {
    // Greedy, most important first (salience, then links): a node is labelled at the first spot where
    // its label touches no label already shown and no disc of a more important node; the others are
    // labelled when zooming in makes room. A label may cover a less important node's disc (its white
    // outline keeps both readable): otherwise the hubs of a dense cluster, whose neighbours crowd
    // round them, would be the ones left without a name. Sizes follow the zoom, so every shown label
    // is LABEL_PX on screen.
    const zoom = cy.zoom();
    const shown = cy.nodes(":visible");
    cy.batch(() => {
      shown.style({ "font-size": LABEL_PX / zoom, "text-outline-width": 2 / zoom, "text-max-width": LABEL_MAX_PX / zoom,
                    "text-margin-y": 0, "text-margin-x": 0 });
      cy.nodes().removeClass("labelled");
    });
    const gap = 2 / zoom;
    // A label cut by the edge of the canvas cannot be read either: it waits until a pan brings it in.
    const view = cy.extent();
    const margins = [{ "text-margin-y": gap }, { "text-margin-y": -gap }, { "text-margin-x": gap }, { "text-margin-x": -gap }];
    const leaves = shown.filter((n) => !n.isParent()).toArray()
      .sort((a, b) => (b.data("size") + 2 * b.degree()) - (a.data("size") + 2 * a.degree()));
    const groups = shown.filter((n) => n.isParent() && n.data("kind") === "tag").toArray();
    const discs = new Map(leaves.map((n) => [n.id(), n.boundingBox({ includeLabels: false, includeOverlays: false })]));
    const placed = [];
    const above = [];  // discs of the nodes ranked before this one
    groups.concat(leaves.slice(0, LABEL_CANDIDATES)).forEach((node) => {
      const leaf = !node.isParent();
      node.addClass("labelled");
      const spots = leaf ? SPOTS : [SPOTS[1]];
      const found = spots.some((spot, i) => {
        if (leaf) node.style({ ...spot, "text-margin-y": 0, "text-margin-x": 0, ...margins[i] });
        const box = labelBox(node);
        if (!within(box, view) || placed.some((b) => intersects(box, b)) || above.some((d) => intersects(box, d))) return false;
        placed.push(box);
        return true;
      });
      if (!found) {
        node.removeClass("labelled");
        if (leaf) node.style(SPOTS[0]);
      }
      if (leaf) above.push(discs.get(node.id()));
    });
  }

  function debounce(fn, ms) {
    let timer = null;
    return () => {
      clearTimeout(timer);
      timer = setTimeout(fn, ms);
    };
  }

  function inside(edge) {
    const parent = edge.source().data("parent");
    return parent !== undefined && parent === edge.target().data("parent");
  }

  function layout(cy, memoryView) {
    const drawn = cy.elements().not(".isolated");
    const nodes = drawn.nodes();
    if (nodes.nonempty()) {
      const big = nodes.length > PROOF_NODES;
      const random = Math.random;
      Math.random = seeded(20261204);
      try {
        drawn.layout({
          name: typeof cytoscapeFcose !== "undefined" ? "fcose" : "cose",
          quality: big ? "draft" : "default", randomize: true, animate: false, fit: false, padding: 20,
          packComponents: true, tile: true, numIter: big ? 1000 : 2500,
          nodeDimensionsIncludeLabels: false, nodeSeparation: memoryView ? 90 : 70,
          nodeRepulsion: () => (memoryView ? 12000 : 9000),
          // Clusters hold their members close and stay apart from each other: an edge inside a
          // cluster is short and stiff, one between clusters long and slack, so a few strong
          // bridges do not pull the shaded areas over one another.
          idealEdgeLength: (edge) => (inside(edge) ? (memoryView ? 110 : 55) : (memoryView ? 220 : 200)),
          edgeElasticity: (edge) => (inside(edge) ? 0.45 : 0.02),
          nestingFactor: 0.1, gravity: 0.2, gravityCompound: 1.5, gravityRangeCompound: 1.2,
        }).run();
      } finally {
        Math.random = random;
      }
    }
    frame(cy);
  }

  function frame(cy) {
    const visible = cy.elements(":visible");
    cy.fit(visible.nonempty() ? visible : undefined, 24);
    if (cy.zoom() > 1.4) {  // a handful of nodes should not fill the canvas
      cy.zoom(1.4);
      cy.center(visible);
    }
    placeLabels(cy);
  }

  function panelUrl(urls, node) {
    if (node.data("kind") === "entity") return urls.entity.replace(/0\/$/, node.data("entityId") + "/");
    if (node.data("kind") === "memory") return urls.memory.replace(/0\/panel\/$/, node.data("memoryId") + "/panel/") + "?from=graph";
    return null;
  }

  function draw(data, urls, state) {
    const placeholder = document.querySelector(".graph-canvas-placeholder");
    const container = document.createElement("div");
    container.id = "cy";
    container.className = "graph-canvas";
    container.setAttribute("role", "img");
    container.setAttribute("aria-label", placeholder.dataset.label);
    placeholder.replaceWith(container);
    if (typeof cytoscapeFcose !== "undefined" && !draw.registered) {
      cytoscape.use(cytoscapeFcose);
      draw.registered = true;
    }
    const cy = cytoscape({
      container, elements: elements(data), style: style(), layout: { name: "preset" },
      minZoom: 0.02, maxZoom: 4,
      textureOnViewport: data.nodes.length > 400, hideEdgesOnViewport: data.nodes.length > 400,
    });
    layout(cy, data.view === "memories");
    window.kybernesisGraph = cy;
    // Placed again once the view settles: zooming changes the room there is, panning what is in view.
    cy.on("viewport", debounce(() => placeLabels(cy), 120));
    cy.on("mouseover", "edge", (event) => event.target.addClass("hover"));
    cy.on("mouseout", "edge", (event) => event.target.removeClass("hover"));
    cy.on("tap", "node", (event) => {
      const url = panelUrl(urls, event.target);
      if (!url) return;
      state.picked = true;
      cy.nodes().unselect();
      event.target.select();
      htmx.ajax("GET", url, { target: "#graph-panel", swap: "innerHTML" });
    });
    if (data.centre) {
      const node = cy.getElementById(data.centre);
      if (node.nonempty()) {
        node.select();
        cy.zoom({ level: Math.max(cy.zoom(), 1), position: node.position() });
        cy.center(node);
      }
    }
    container.dataset.ready = "true";
    return cy;
  }

  function showIsolated(cy, show) {
    const alone = cy.nodes(".isolated");
    if (show) {
      if (!alone.first().scratch("placed")) {
        placeIsolated(alone, cy.nodes().not(".isolated"));
        alone.scratch("placed", true);
      }
      alone.addClass("shown");
    } else {
      alone.removeClass("shown");
    }
    frame(cy);
  }

  function start() {
    const placeholder = document.querySelector(".graph-canvas-placeholder");
    const dataTag = document.getElementById("graph-data");
    if (!placeholder || !dataTag || typeof cytoscape === "undefined") return;
    const data = JSON.parse(dataTag.textContent);
    const urls = JSON.parse(document.getElementById("graph-urls").textContent);
    const layoutBox = document.getElementById("graph-layout");
    const list = document.getElementById("graph-list");
    const toggle = document.getElementById("graph-show-isolated");
    const buttons = { drawing: document.getElementById("graph-mode-drawing"), list: document.getElementById("graph-mode-list") };
    const state = { picked: false, cy: null };

    // On a narrow screen the side panel sits under the drawing and the node list, out of sight: when the
    // person picks a node (not for the node the page opens centred on), the panel is scrolled into view.
    // Focus stays on the link they used.
    const panel = document.getElementById("graph-panel");
    document.addEventListener("htmx:afterSettle", (event) => {
      if (event.target !== panel || !state.picked) return;
      state.picked = false;
      if (!window.matchMedia("(max-width: 900px)").matches) return;
      const box = panel.getBoundingClientRect();
      if (box.top < 0 || box.top > window.innerHeight * 0.6) panel.scrollIntoView({ block: "start" });
    });

    function setMode(mode, chosen) {
      layoutBox.dataset.mode = mode;
      Object.entries(buttons).forEach(([name, button]) => button.setAttribute("aria-pressed", String(name === mode)));
      if (mode === "list") list.open = true;
      // The drawing is made the first time it is shown: a phone that stays on the list never pays for it.
      if (mode === "drawing" && !state.cy) {
        state.cy = draw(data, urls, state);
        if (toggle && toggle.checked) showIsolated(state.cy, true);
      }
      if (chosen) {
        try { sessionStorage.setItem(MODE_KEY, mode); } catch (e) { /* storage refused: the choice lasts for this page */ }
      }
    }

    document.getElementById("graph-toolbar").hidden = false;
    buttons.drawing.addEventListener("click", () => setMode("drawing", true));
    buttons.list.addEventListener("click", () => setMode("list", true));
    if (toggle) {
      // The summary says how many are hidden; once they are shown it says so instead.
      const count = document.getElementById("isolated-count");
      const hiddenText = count ? count.textContent : "";
      toggle.addEventListener("change", () => {
        const more = document.getElementById("graph-isolated-list");
        if (more) more.hidden = !toggle.checked;
        if (state.cy) showIsolated(state.cy, toggle.checked);
        if (count && count.dataset.shown) count.textContent = toggle.checked ? count.dataset.shown : hiddenText;
      });
    }
    let remembered = null;
    try { remembered = sessionStorage.getItem(MODE_KEY); } catch (e) { /* no storage: use the width */ }
    const mode = remembered === "list" || remembered === "drawing" ? remembered : (window.matchMedia(NARROW).matches ? "list" : "drawing");
    // Beside the drawing, the list starts folded unless it is short.
    if (mode === "drawing" && data.nodes.length > 12) list.open = false;
    setMode(mode, false);

    if (data.centre) {
      const node = data.nodes.find((n) => n.id === data.centre);
      if (node) {
        const url = node.entityId ? urls.entity.replace(/0\/$/, node.entityId + "/")
          : urls.memory.replace(/0\/panel\/$/, node.memoryId + "/panel/") + "?from=graph";
        htmx.ajax("GET", url, { target: "#graph-panel", swap: "innerHTML" });
      }
    }
    // The list opens the same side panel (via hx-get); keep the drawing in step.
    document.addEventListener("click", (event) => {
      const link = event.target.closest("#graph-list [data-node-id]");
      if (!link) return;
      state.picked = true;
      if (!state.cy) return;
      const node = state.cy.getElementById(link.dataset.nodeId);
      if (node.empty()) return;
      state.cy.nodes().unselect();
      node.select();
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
