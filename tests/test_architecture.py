"""The house rules on imports (docs/architecture.md): each layer imports only the layers left of it,
Streamlit only in ui/ (and app.py, app_pages/), no import cycle between project modules (function-local imports
included: they only hide a cycle), and no project import inside a function."""
from __future__ import annotations

import ast

from conftest import ROOT

PACKAGES = ("corpora", "models", "explainers", "evaluation", "ui", "commands", "workbench")
# corpora -> models -> explainers -> evaluation -> ui; commands sit beside ui (both read evaluation, never each other);
# workbench, the Python library face, sits on top like app.py (it draws with ui/figures, never Streamlit)
LAYER = {"corpora": 0, "models": 1, "explainers": 2, "evaluation": 3, "ui": 4, "commands": 4, "workbench": 5}
# function-local project imports kept on purpose (none today); each would need its reason at the import
ALLOWED_LOCAL: set[str] = set()
# heavy third-party modules imported only inside functions, and only by these modules (`import workbench`
# must not pay them; tests/workbench/test_workbench_import_cost.py checks the result in a fresh interpreter)
LAZY_HEAVY = {"captum": {"explainers.captum_lazy", "models.runtime"},
              "transformers.masking_utils": {"models.first_token"},
              "sklearn": {"evaluation.errors.filters", "evaluation.plausibility.rationale_scores", "evaluation.errors.embedding_map",
                          "explainers.methods.lime"},
              "scipy": {"models.untrained_head", "explainers.coarse_to_fine", "evaluation.agreement.measures",
                        "evaluation.roar.scores", "evaluation.statistics", "evaluation.sanity.one_input",
                        "evaluation.sanity.repeatability", "evaluation.errors.slices"}}


def module_name(path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, object]:
    return {module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}


def imported(node, modules) -> list[str]:
    """Project modules an import statement loads (``from a import b`` is module a.b when that is one)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
        names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                 for alias in node.names]
    else:
        return []
    return [name for name in names if name in modules]


def import_graph(modules) -> dict[str, set[str]]:
    """Every import, at module level or inside a function; a package's own ``__init__`` is left out of its
    sub-modules' edges (importing ``a.b`` always runs ``a/__init__`` first: that is not a cycle of the code)."""
    graph = {}
    for name, path in modules.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            for target in imported(node, modules):
                if target != name and not name.startswith(target + "."):
                    edges.add(target)
        graph[name] = edges
    return graph


def cycles(graph) -> list[list[str]]:
    found, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return found


def test_the_masked_lm_package_layers_filler_recipe_loading_prepare():
    graph = import_graph(project_modules())
    inside = {name: {e for e in edges if e.startswith("models.mlm.")} for name, edges in graph.items()
              if name.startswith("models.mlm.")}
    assert inside == {"models.mlm.filler": set(), "models.mlm.recipe": set(), "models.mlm.checkpoints": set(),
                      "models.mlm.inspector": {"models.mlm.filler"},
                      "models.mlm.loading": {"models.mlm.filler", "models.mlm.recipe"},
                      "models.mlm.prepare": {"models.mlm.checkpoints", "models.mlm.filler", "models.mlm.loading",
                                             "models.mlm.recipe"},
                      "models.mlm.phrases": {"models.mlm.filler"}}


def test_each_layer_imports_only_the_layers_left_of_it():
    graph = import_graph(project_modules())
    upward = [(name, target) for name, edges in graph.items() for target in edges
              if LAYER[target.split(".")[0]] > LAYER[name.split(".")[0]]
              or {name.split(".")[0], target.split(".")[0]} == {"ui", "commands"}]
    assert upward == []


def test_streamlit_is_imported_only_by_the_ui():
    outside = [str(p.relative_to(ROOT)) for package in PACKAGES if package != "ui"
               for p in (ROOT / package).rglob("*.py") if "streamlit" in _imported_names(p)]
    outside += [str(p.relative_to(ROOT)) for p in [ROOT / "cli.py"] if "streamlit" in _imported_names(p)]
    assert outside == []


def _imported_names(path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_the_library_face_reads_only_the_streamlit_free_figures_of_the_ui():
    graph = import_graph(project_modules())
    ui_used = {target for name, edges in graph.items() if name.startswith("workbench") for target in edges
               if target.startswith("ui")}
    assert ui_used and all(target.startswith("ui.figures.") for target in ui_used)
    figures = {name: edges for name, edges in graph.items() if name.startswith("ui.figures")}
    assert [name for name, edges in figures.items() if any(e.startswith("ui.widgets") for e in edges)] == []


def test_no_import_cycle_between_project_modules():
    assert cycles(import_graph(project_modules())) == []


def test_no_project_import_inside_a_function():
    modules = project_modules()
    offenders = []
    for name, path in modules.items():
        if name in ALLOWED_LOCAL:
            continue
        tree = ast.parse(path.read_text())
        for function in ast.walk(tree):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(function):
                    if imported(node, modules):
                        offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


def test_heavy_third_party_modules_are_imported_lazily_and_only_where_allowed():
    found = []
    for name, path in project_modules().items():
        tree = ast.parse(path.read_text())
        functions = [f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
        local = {id(node) for function in functions for node in ast.walk(function)}
        for node in ast.walk(tree):
            modules = ([alias.name for alias in node.names] if isinstance(node, ast.Import) else
                       [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else [])
            for module in modules:
                heavy = next((h for h in LAZY_HEAVY if module == h or module.startswith(h + ".")), None)
                if heavy and not (id(node) in local and name in LAZY_HEAVY[heavy]):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {module}")
    assert found == []


# evaluation/ in floors (docs/architecture.md, "why floors"): the loose files are the core every other floor reads;
# runs/ (jobs, store, executors) knows no metric; the families read the core and runs/ and each other only without
# a cycle; suite/ assembles the families (registry, dataset runner, report card); reproduce/ composes suite studies
EVALUATION_CORE = {"metric", "targets", "statistics", "seeds", "user_regex", "baselines", "summary", "batch"}
EVALUATION_FAMILIES = {"faithfulness", "plausibility", "sanity", "roar", "adversarial", "errors", "agreement"}
EVALUATION_FLOOR = {"core": 0, "runs": 1, **{family: 2 for family in EVALUATION_FAMILIES}, "suite": 3, "reproduce": 4}


def evaluation_unit(module: str) -> str:
    """The floor unit of an evaluation module: "core" for the loose files, else its folder."""
    parts = module.split(".")
    if len(parts) == 1 or (len(parts) == 2 and (ROOT / "evaluation" / f"{parts[1]}.py").exists()):
        return "core"
    return parts[1]


def evaluation_folder_graph() -> dict[str, set[str]]:
    graph = import_graph(project_modules())
    folders: dict[str, set[str]] = {}
    for name, edges in graph.items():
        if name.startswith("evaluation"):
            unit = evaluation_unit(name)
            folders.setdefault(unit, set()).update(evaluation_unit(e) for e in edges if e.startswith("evaluation"))
    return {unit: targets - {unit} for unit, targets in folders.items()}


def test_the_loose_files_of_evaluation_are_the_core_only():
    loose = {p.stem for p in (ROOT / "evaluation").glob("*.py")} - {"__init__"}
    folders = {p.name for p in (ROOT / "evaluation").iterdir() if p.is_dir() and any(p.glob("*.py"))}
    assert loose - EVALUATION_CORE == set()
    assert folders - set(EVALUATION_FLOOR) == set()


def test_evaluation_floors_import_only_their_floor_or_below():
    graph = evaluation_folder_graph()
    upward = sorted((unit, target) for unit, targets in graph.items() for target in targets
                    if EVALUATION_FLOOR.get(target, 99) > EVALUATION_FLOOR.get(unit, -1)
                    or (EVALUATION_FLOOR.get(target) == EVALUATION_FLOOR.get(unit) and unit not in EVALUATION_FAMILIES))
    assert upward == []


def test_no_cycle_between_evaluation_families():
    graph = evaluation_folder_graph()
    families = {unit: targets & EVALUATION_FAMILIES for unit, targets in graph.items() if unit in EVALUATION_FAMILIES}
    assert cycles(families) == []


MAX_LINES = 450  # a file per idea: past this, a product file holds more than one (DESIGN.md)


def test_no_product_file_is_over_the_line_limit():
    files = [*project_modules().values(), *(ROOT / "app_pages").glob("*.py"), ROOT / "app.py", ROOT / "cli.py",
             ROOT / "settings.py"]
    too_long = {str(p.relative_to(ROOT)): n for p in files if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not too_long, too_long
