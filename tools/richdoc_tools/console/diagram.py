"""The state machine drawn as the Step Functions console draws it: boxes top to bottom,
one arrow per transition, a Map state as a frame around its iterator.

A layered layout (Sugiyama's method, small): each state's layer is its longest path from
the start, a transition that spans several layers passes through a point on each layer
between, the order within a layer comes from barycentre sweeps that reduce crossings, and
the horizontal positions are the closest (least squares) to the neighbours' that keep
the order and the gaps (pool-adjacent-violators). Pure: a ``Machine`` in, coordinates
out; the page template turns them into SVG.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from richdoc_tools.ops.statemachine import SEPARATOR, Machine, TransitionKind

NODE_HEIGHT = 28.0
CHAR_WIDTH = 6.6  # an average character of the diagram's 11px sans-serif font
TEXT_PADDING = 14.0
MIN_WIDTH = 90.0
GAP_X = 20.0
GAP_Y = 34.0
WAYPOINT_WIDTH = 6.0  # a point a long transition passes through
MAP_PADDING = 14.0
MAP_HEADER = 22.0
MARGIN = 12.0
START_RADIUS = 7.0
SWEEPS = 12


@dataclass(frozen=True)
class Box:
    name: str  # qualified (Map/State)
    label: str
    type: str
    x: float  # top-left corner
    y: float
    width: float
    height: float

    @property
    def container(self) -> bool:
        return self.type == "Map"

    @property
    def centre_x(self) -> float:
        return self.x + self.width / 2


@dataclass(frozen=True)
class Line:
    source: str  # qualified names; "" for the start marker
    target: str
    kind: str  # a TransitionKind, or "start"
    label: str
    points: tuple[tuple[float, float], ...]

    @property
    def path(self) -> str:
        """The SVG path: straight between two points, else a smooth curve through them
        (Catmull-Rom segments as cubic Béziers)."""
        p = self.points
        d = [f"M{p[0][0]:.1f},{p[0][1]:.1f}"]
        for i in range(len(p) - 1):
            before, start, end = p[max(i - 1, 0)], p[i], p[i + 1]
            after = p[min(i + 2, len(p) - 1)]
            c1 = (start[0] + (end[0] - before[0]) / 6, start[1] + (end[1] - before[1]) / 6)
            c2 = (end[0] - (after[0] - start[0]) / 6, end[1] - (after[1] - start[1]) / 6)
            d.append(f"C{c1[0]:.1f},{c1[1]:.1f} {c2[0]:.1f},{c2[1]:.1f} {end[0]:.1f},{end[1]:.1f}")
        return " ".join(d)


@dataclass(frozen=True)
class Diagram:
    width: float
    height: float
    boxes: tuple[Box, ...]
    lines: tuple[Line, ...]
    start: tuple[float, float]  # the start marker's centre

    def box(self, name: str) -> Box:
        return next(b for b in self.boxes if b.name == name)


def draw(machine: Machine) -> Diagram:
    layout = _layout(machine, "")
    top = MARGIN + 2 * START_RADIUS + GAP_Y / 2
    boxes = [_moved(b, MARGIN, top) for b in layout.boxes]
    lines = [_shifted(line, MARGIN, top) for line in layout.lines]
    first = next(b for b in boxes if b.name == machine.start_at)
    start = (first.centre_x, MARGIN + START_RADIUS)
    lines.append(Line("", first.name, "start", "", (start, (first.centre_x, first.y))))
    return Diagram(
        width=layout.width + 2 * MARGIN,
        height=top + layout.height + MARGIN,
        boxes=tuple(boxes),
        lines=tuple(lines),
        start=start,
    )


# ---- one machine ----------------------------------------------------------------------------


@dataclass
class _Layout:
    width: float
    height: float
    boxes: list[Box]
    lines: list[Line]


@dataclass
class _Node:
    key: str  # a state's name, or a waypoint's "<source>→<target>#<layer>"
    width: float
    height: float
    layer: int
    state: str | None  # None for a waypoint
    up: list[str] = field(default_factory=list)  # neighbours on the layer above
    down: list[str] = field(default_factory=list)  # ... and below
    x: float = 0.0


def _layout(machine: Machine, prefix: str) -> _Layout:
    inner = {
        name: _layout(state.iterator, prefix + name + SEPARATOR)
        for name, state in machine.states.items()
        if state.iterator is not None
    }
    nodes: dict[str, _Node] = {}
    layers = _layers(machine)
    for name in machine.states:
        if name in inner:
            width = inner[name].width + 2 * MAP_PADDING
            height = inner[name].height + MAP_HEADER + MAP_PADDING
        else:
            width = max(MIN_WIDTH, CHAR_WIDTH * len(name) + 2 * TEXT_PADDING)
            height = NODE_HEIGHT
        nodes[name] = _Node(name, width, height, layers[name], name)

    # Each transition as a chain of nodes, one per layer it crosses; catches of one state
    # to the same target are one arrow.
    merged: dict[tuple[str, str, TransitionKind], list[str]] = {}
    for transition in machine.transitions():
        if transition.source != transition.target:
            labels = merged.setdefault((transition.source, transition.target, transition.kind), [])
            labels.append(transition.label)
    chains: list[tuple[TransitionKind, str, str, str, list[str]]] = []
    for (source, target, kind), labels in merged.items():
        chain = [source]
        low, high = sorted((layers[source], layers[target]))
        for layer in range(low + 1, high):
            key = f"{source}→{target}#{kind}#{layer}"
            nodes[key] = _Node(key, WAYPOINT_WIDTH, NODE_HEIGHT, layer, None)
            chain.append(key)
        chain.append(target)
        if layers[target] < layers[source]:  # a loop back up: drawn the same, reversed
            chain = [source, *reversed(chain[1:-1]), target]
        for upper, lower in itertools.pairwise(chain):
            if nodes[upper].layer > nodes[lower].layer:
                upper, lower = lower, upper
            nodes[upper].down.append(lower)
            nodes[lower].up.append(upper)
        chains.append((kind, "; ".join(label for label in labels if label), source, target, chain))

    rows = _ordered(nodes, machine)
    _place(nodes, rows)
    left = min(n.x - n.width / 2 for n in nodes.values())
    for node in nodes.values():
        node.x -= left

    tops, y = [], 0.0
    for row in rows:
        tops.append(y)
        y += max(nodes[k].height for k in row) + GAP_Y
    height = y - GAP_Y
    width = max(n.x + n.width / 2 for n in nodes.values())

    boxes: list[Box] = []
    for name, state in machine.states.items():
        node = nodes[name]
        box = Box(
            prefix + name,
            name,
            state.type,
            node.x - node.width / 2,
            tops[node.layer],
            node.width,
            node.height,
        )
        boxes.append(box)
        if name in inner:
            dx, dy = box.x + MAP_PADDING, box.y + MAP_HEADER
            boxes += [_moved(b, dx, dy) for b in inner[name].boxes]
    placed = {b.name: b for b in boxes}

    lines = [
        Line(
            prefix + source,
            prefix + target,
            str(kind),
            label,
            _route(chain, nodes, tops, placed[prefix + source], placed[prefix + target]),
        )
        for kind, label, source, target, chain in chains
    ]
    _spread_ends(lines, placed)
    for name, sub in inner.items():
        box = placed[prefix + name]
        lines += [_shifted(line, box.x + MAP_PADDING, box.y + MAP_HEADER) for line in sub.lines]
    return _Layout(width, height, boxes, lines)


def _layers(machine: Machine) -> dict[str, int]:
    """Each state's longest path from the start (loops broken where a depth-first walk
    finds them; states the start does not reach start layers of their own)."""
    order: list[str] = []
    state_of: dict[str, int] = {}  # 1: on the walk's stack, 2: done
    back: set[tuple[str, str]] = set()

    def visit(name: str) -> None:
        state_of[name] = 1
        for t in machine[name].transitions:
            if state_of.get(t.target) == 1:
                back.add((name, t.target))
            elif t.target not in state_of:
                visit(t.target)
        state_of[name] = 2
        order.append(name)

    for name in [machine.start_at, *machine.states]:
        if name not in state_of:
            visit(name)
    layer = dict.fromkeys(machine.states, 0)
    for name in reversed(order):  # a topological order of the loop-free graph
        for t in machine[name].transitions:
            if (name, t.target) not in back and t.target != name:
                layer[t.target] = max(layer[t.target], layer[name] + 1)
    return layer


def _ordered(nodes: dict[str, _Node], machine: Machine) -> list[list[str]]:
    """Nodes by layer, each layer ordered to cross few transitions."""
    rank = {name: i for i, name in enumerate(_walk_order(machine))}
    count = max(n.layer for n in nodes.values()) + 1
    rows: list[list[str]] = [[] for _ in range(count)]
    for key in sorted(nodes, key=lambda k: _initial_rank(k, rank)):
        rows[nodes[key].layer].append(key)

    best, best_crossings = [list(r) for r in rows], _crossings(rows, nodes)
    for sweep in range(SWEEPS):
        downward = sweep % 2 == 0
        indices = range(1, count) if downward else range(count - 2, -1, -1)
        for i in indices:
            fixed = rows[i - 1] if downward else rows[i + 1]
            position = {k: p for p, k in enumerate(fixed)}

            def barycentre(
                key: str, position: dict[str, int] = position, downward: bool = downward
            ) -> float:
                node = nodes[key]
                linked = [position[k] for k in (node.up if downward else node.down)]
                if not linked:
                    return float(rows[node.layer].index(key))
                return sum(linked) / len(linked)

            rows[i] = sorted(rows[i], key=barycentre)
        crossings = _crossings(rows, nodes)
        if crossings < best_crossings:
            best, best_crossings = [list(r) for r in rows], crossings
    return best


def _walk_order(machine: Machine) -> list[str]:
    """States in a depth-first walk from the start, the ``Next`` of each first: the main
    route ends up on the left."""
    seen: list[str] = []

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.append(name)
        for t in sorted(machine[name].transitions, key=lambda t: t.kind != TransitionKind.NEXT):
            visit(t.target)

    for name in [machine.start_at, *machine.states]:
        visit(name)
    return seen


def _initial_rank(key: str, rank: dict[str, int]) -> tuple[int, str]:
    source = key.split("→", 1)[0]
    return rank.get(key, rank.get(source, len(rank))), key


def _crossings(rows: Sequence[Sequence[str]], nodes: dict[str, _Node]) -> int:
    total = 0
    for upper, lower in itertools.pairwise(rows):
        at = {k: i for i, k in enumerate(lower)}
        pairs = sorted((i, at[d]) for i, k in enumerate(upper) for d in nodes[k].down if d in at)
        for a, (i1, j1) in enumerate(pairs):
            total += sum(1 for i2, j2 in pairs[a + 1 :] if i2 > i1 and j2 < j1)
    return total


def _place(nodes: dict[str, _Node], rows: list[list[str]]) -> None:
    """Horizontal centres: start packed, then pulled towards the neighbours' centres,
    layer by layer, down and up, keeping each layer's order and gaps."""
    for row in rows:
        x = 0.0
        for key in row:
            node = nodes[key]
            node.x = x + node.width / 2
            x += node.width + GAP_X
    for sweep in range(SWEEPS):
        downward = sweep % 2 == 0
        order = rows[1:] if downward else list(reversed(rows[:-1]))
        for row in order:
            wanted = []
            for key in row:
                node = nodes[key]
                linked = node.up if downward else node.down
                if sweep == SWEEPS - 1:
                    linked = node.up + node.down
                xs = [nodes[k].x for k in linked]
                wanted.append(sum(xs) / len(xs) if xs else node.x)
            for key, x in zip(row, _closest_keeping_order(row, wanted, nodes), strict=True):
                nodes[key].x = x


def _closest_keeping_order(
    row: Sequence[str], wanted: Sequence[float], nodes: dict[str, _Node]
) -> list[float]:
    """Centres as close as possible to ``wanted`` (least squares) with each node at least
    its gap right of the one before: isotonic regression on the positions less the
    widths before them, by pool-adjacent-violators."""
    offsets, offset = [], 0.0
    for i, key in enumerate(row):
        if i:
            previous = nodes[row[i - 1]]
            offset += previous.width / 2 + GAP_X + nodes[key].width / 2
        offsets.append(offset)
    targets = [w - o for w, o in zip(wanted, offsets, strict=True)]
    blocks: list[list[float]] = []  # [mean, count]
    for target in targets:
        blocks.append([target, 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            mean, count = blocks.pop()
            blocks[-1] = [
                (blocks[-1][0] * blocks[-1][1] + mean * count) / (blocks[-1][1] + count),
                blocks[-1][1] + count,
            ]
    fitted = [mean for mean, count in blocks for _ in range(int(count))]
    return [f + o for f, o in zip(fitted, offsets, strict=True)]


def _route(
    chain: Sequence[str],
    nodes: dict[str, _Node],
    tops: Sequence[float],
    source: Box,
    target: Box,
) -> tuple[tuple[float, float], ...]:
    """Bottom of the source, through the waypoints, to the top of the target (a loop
    back up leaves from the source's top and enters the target's bottom)."""
    upward = target.y < source.y
    start = (source.centre_x, source.y if upward else source.y + source.height)
    end = (target.centre_x, target.y + target.height if upward else target.y)
    middle = [(nodes[k].x, tops[nodes[k].layer] + NODE_HEIGHT / 2) for k in chain[1:-1]]
    return (start, *middle, end)


def _spread_ends(lines: list[Line], boxes: dict[str, Box]) -> None:
    """Several arrows leaving (entering) one box start (end) at points spread along its
    edge, in the order of where they go (come from), instead of all at its centre."""
    for name, box in boxes.items():
        out = sorted(
            (i for i, line in enumerate(lines) if line.source == name),
            key=lambda i: lines[i].points[1][0],
        )
        into = sorted(
            (i for i, line in enumerate(lines) if line.target == name),
            key=lambda i: lines[i].points[-2][0],
        )
        for group, end in ((out, 0), (into, -1)):
            for n, i in enumerate(group):
                x = box.x + box.width * (n + 1) / (len(group) + 1)
                points = list(lines[i].points)
                points[end] = (x, points[end][1])
                lines[i] = _with_points(lines[i], points)


def _with_points(line: Line, points: Iterable[tuple[float, float]]) -> Line:
    return Line(line.source, line.target, line.kind, line.label, tuple(points))


def _moved(box: Box, dx: float, dy: float) -> Box:
    return Box(box.name, box.label, box.type, box.x + dx, box.y + dy, box.width, box.height)


def _shifted(line: Line, dx: float, dy: float) -> Line:
    return _with_points(line, ((x + dx, y + dy) for x, y in line.points))
