// The topology page: draws the server's capped graph with cytoscape.js and opens the side panel
// (an HTMX fragment) for the node that is clicked.
(function () {
  "use strict";

  const TYPE_COLOURS = {
    person: "#4f46e5", organization: "#0ea5e9", location: "#10b981", concept: "#94a3b8",
    technology: "#f59e0b", product: "#ec4899", event: "#ef4444", work: "#8b5cf6", group: "#14b8a6",
  };
  const TIER_COLOURS = { hot: "#e8590c", warm: "#d4a106", archive: "#64748b" };

  function elements(data) {
    const nodes = data.nodes.map((n) => ({
      group: "nodes",
      data: {
        id: n.id, kind: n.kind,
        label: n.kind === "memory" && n.label.length > 28 ? n.label.slice(0, 27) + "…" : n.label, parent: n.parent || undefined,
        entityId: n.entityId, memoryId: n.memoryId,
        colour: n.kind === "entity" ? (TYPE_COLOURS[n.type] || "#94a3b8") : (TIER_COLOURS[n.type] || "#6366f1"),
        size: n.kind === "entity" ? 16 + 44 * (n.salience || 0) : 22,
      },
    }));
    const edges = data.edges.map((e) => ({
      group: "edges",
      data: {
        id: e.id, source: e.source, target: e.target, weight: e.weight,
        label: (e.relationType || e.reason || "").replace(/_/g, " "),
        width: 1 + 5 * e.weight,
      },
    }));
    return nodes.concat(edges);
  }

  function style() {
    return [
      { selector: "node", style: {
        "background-color": "data(colour)", width: "data(size)", height: "data(size)", label: "data(label)",
        "font-size": 10, color: "#1d2330", "text-valign": "bottom", "text-margin-y": 3,
        "text-outline-color": "#fff", "text-outline-width": 2, "min-zoomed-font-size": 7 } },
      { selector: "node[kind = 'tag']", style: {
        "background-color": "#eef2ff", "background-opacity": 0.55, "border-color": "#c7d2fe", "border-width": 1,
        shape: "round-rectangle", "text-valign": "top", "font-size": 11, color: "#3730a3", "font-weight": 600 } },
      { selector: "edge", style: {
        width: "data(width)", "line-color": "#cbd5e1", "curve-style": "haystack", opacity: 0.8 } },
      { selector: "edge.hover", style: {
        label: "data(label)", "font-size": 10, "line-color": "#6366f1", color: "#3730a3",
        "text-background-color": "#fff", "text-background-opacity": 1, "text-background-padding": 2,
        "curve-style": "bezier", "z-index": 10 } },
      { selector: "node[kind = 'memory']", style: {
        "text-wrap": "ellipsis", "text-max-width": 110, "min-zoomed-font-size": 9 } },
      { selector: "node.salient", style: { "min-zoomed-font-size": 0, "z-index": 5, "font-weight": 600 } },
      { selector: "node:selected", style: { "border-width": 3, "border-color": "#111827" } },
    ];
  }

  let fcoseRegistered = false;
  // How many of the most salient nodes are labelled at first paint, and their size on screen.
  const SALIENT_LABELS = 40;
  const LABEL_PX = 12;
  // fcose's spectral start and force refinement read well up to a few thousand nodes; past this the
  // refinement is left out ("draft"), which keeps 2,000 nodes to about a second.
  const PROOF_NODES = 800;

  function placeIsolated(cy, alone, placed) {
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

  function labelSalient(cy) {
    // Labels of the most salient nodes are sized for the zoom the page opens at, so they are
    // readable at once; the rest appear as the reader zooms in (min-zoomed-font-size).
    const zoom = cy.zoom();
    const ranked = cy.nodes().filter((n) => !n.isParent())
      .sort((a, b) => (b.data("size") + 2 * b.degree()) - (a.data("size") + 2 * a.degree()));
    const shown = [];
    ranked.slice(0, SALIENT_LABELS).forEach((node) => {
      node.addClass("salient");
      node.style("font-size", Math.min(28, LABEL_PX / zoom));
      node.style("text-outline-width", Math.min(5, 2 / zoom));
      if (node.data("kind") === "memory") node.style("text-max-width", 150 / zoom);
      // A label that would cover a more salient one is left for the reader to zoom in to.
      const box = node.boundingBox({ includeLabels: true, includeOverlays: false });
      if (shown.some((b) => box.x1 < b.x2 && b.x1 < box.x2 && box.y1 < b.y2 && b.y1 < box.y2)) {
        node.removeClass("salient");
        node.removeStyle("font-size text-outline-width text-max-width");
        return;
      }
      shown.push(box);
    });
  }

  function layout(cy, memoryView) {
    const connected = cy.nodes().filter((n) => n.degree() > 0 || n.isParent() || n.isChild());
    const alone = cy.nodes().filter((n) => !connected.has(n));
    const drawn = connected.union(connected.edgesWith(connected));
    if (connected.nonempty()) {
      const big = connected.length > PROOF_NODES;
      drawn.layout({
        name: typeof cytoscapeFcose !== "undefined" ? "fcose" : "cose",
        quality: big ? "draft" : "default", randomize: true, animate: false, fit: false, padding: 20,
        packComponents: true, nodeDimensionsIncludeLabels: memoryView, nodeSeparation: memoryView ? 90 : 60,
        idealEdgeLength: () => (memoryView ? 120 : 70), nodeRepulsion: () => (memoryView ? 12000 : 6000),
        tile: true, numIter: big ? 1000 : 2500,
      }).run();
    }
    placeIsolated(cy, alone, connected);
    cy.fit(undefined, 24);
    if (cy.zoom() > 1.4) {  // a handful of nodes should not fill the canvas
      cy.zoom(1.4);
      cy.center();
    }
    labelSalient(cy);
  }

  function panelUrl(urls, node) {
    if (node.data("kind") === "entity") return urls.entity.replace(/0\/$/, node.data("entityId") + "/");
    if (node.data("kind") === "memory") return urls.memory.replace(/0\/panel\/$/, node.data("memoryId") + "/panel/") + "?from=graph";
    return null;
  }

  function start() {
    const container = document.getElementById("cy");
    const dataTag = document.getElementById("graph-data");
    if (!container || !dataTag || typeof cytoscape === "undefined") return;
    if (typeof cytoscapeFcose !== "undefined" && !fcoseRegistered) {
      cytoscape.use(cytoscapeFcose);
      fcoseRegistered = true;
    }
    // On a narrow screen the side panel sits under the drawing and the node list, out of sight: when the
    // person picks a node (not for the node the page opens centred on), the panel is scrolled into view.
    // Focus stays on the link they used.
    const panel = document.getElementById("graph-panel");
    let picked = false;
    document.addEventListener("htmx:afterSettle", (event) => {
      if (event.target !== panel || !picked) return;
      picked = false;
      if (!window.matchMedia("(max-width: 900px)").matches) return;
      const box = panel.getBoundingClientRect();
      if (box.top < 0 || box.top > window.innerHeight * 0.6) panel.scrollIntoView({ block: "start" });
    });
    const data = JSON.parse(dataTag.textContent);
    const urls = JSON.parse(document.getElementById("graph-urls").textContent);
    const cy = cytoscape({
      container, elements: elements(data), style: style(), layout: { name: "preset" },
      minZoom: 0.02, maxZoom: 4,
      textureOnViewport: data.nodes.length > 400, hideEdgesOnViewport: data.nodes.length > 400,
    });
    layout(cy, data.view === "memories");
    window.kybernesisGraph = cy;

    cy.on("mouseover", "edge", (event) => event.target.addClass("hover"));
    cy.on("mouseout", "edge", (event) => event.target.removeClass("hover"));
    cy.on("tap", "node", (event) => {
      const url = panelUrl(urls, event.target);
      if (!url) return;
      picked = true;
      cy.nodes().unselect();
      event.target.select();
      htmx.ajax("GET", url, { target: "#graph-panel", swap: "innerHTML" });
    });

    if (data.centre) {
      const node = cy.getElementById(data.centre);
      if (node.nonempty()) {
        node.select();
        cy.center(node);
        cy.zoom({ level: Math.max(cy.zoom(), 1), position: node.position() });
        const url = panelUrl(urls, node);
        if (url) htmx.ajax("GET", url, { target: "#graph-panel", swap: "innerHTML" });
      }
    }
    // The node list under the canvas opens the same side panel (via hx-get); keep the drawing in step.
    document.addEventListener("click", (event) => {
      const link = event.target.closest("#graph-list [data-node-id]");
      if (!link) return;
      picked = true;
      const node = cy.getElementById(link.dataset.nodeId);
      if (node.empty()) return;
      cy.nodes().unselect();
      node.select();
    });
    container.dataset.ready = "true";
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
