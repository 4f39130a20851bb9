"""Report-card page blocks (layout only): the settings, start / resume / stop of the card's background run, the
verdict table coloured by verdict with each rule beside it, the ordering with its reasoning, downloads, and the
orderings of several models' cards side by side. The card is built by ``evaluation/suite/report_card.py``."""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

import settings
from evaluation.runs.store import ResultStore
from evaluation.suite import report_card as rc
from evaluation.suite import report_card_rules as rcr
from evaluation.suite.protocols import PROTOCOLS
from evaluation.suite.report_card_html import COLOURS, card_html, interval_text, reference_text
from explainers import REGISTRY, is_known_spec
from ui.widgets.dataset_field import dataset_field
from ui.widgets.run_control import chosen_dataset, start_stop
from ui.widgets.run_picker import pick_run

RUN_KEY = "report_card_run"


def banner() -> None:
    st.markdown("**Which method should I trust for this model?** Every method on every check the project has, "
                "each value with its 95 % interval and a pass / fail / inconclusive verdict whose rule is written "
                "next to it, then an ordering of the methods with its reasoning: never a bare score. Every study "
                "behind the card is stored, so reopening a card recomputes nothing.")


def settings_controls() -> tuple[str | None, list[str], rc.CardConfig]:
    """The card's settings; the dataset is None (and the card cannot start) while a dataset field is refused."""
    defaults = rc.CardConfig()
    c1, c2 = st.columns([2, 3])
    dataset, usable = dataset_field("Dataset", "sst2:dev", "card-dataset", container=c1,
                                    help="name:split (sst2:dev, eraser-movies:validation, ...) or file:PATH")
    options = rc.default_methods() + [m for m in REGISTRY if m not in rc.default_methods()]
    methods = c2.multiselect("Methods", options, default=rc.default_methods(), key="card-methods",
                             help="method or method:preset")
    protocol = protocol_control("card-protocol")
    checks = st.multiselect("Checks", list(rcr.RULES), default=list(rcr.RULES), key="card-checks",
                            format_func=lambda c: rcr.check_name(c, protocol, dataset or "the dataset"))
    quick = st.toggle("Quick (a few examples and attack steps, to try it out)", key="card-quick")
    c1, c2, c3, c4 = st.columns(4)
    sizes = {"limit": c1.number_input("Faithfulness examples", 1, 100_000, defaults.limit, key="card-limit"),
             "sanity_limit": c2.number_input("Sanity examples", 1, 100_000, defaults.sanity_limit,
                                             key="card-sanity-limit", help="paper 003 used 50"),
             "attack_limit": c3.number_input("Attacked examples", 1, 10_000, defaults.attack_limit,
                                             key="card-attack-limit", help="paper 003 attacked 16"),
             "attack_steps": c4.number_input("Attack steps", 1, 5000, defaults.attack_steps, key="card-attack-steps")}
    with st.expander("Data of the known-feature and plausibility checks"):
        kf_model = ("" if settings.shared_mode() else  # no server folder from the browser in shared mode
                    st.text_input("Known-feature model (empty: the project's, when trained)", key="card-kf-model"))
        kf_data, kf_usable = dataset_field("Known-feature dataset (empty: known-feature:dev:0)", "", "card-kf-data",
                                           optional=True)
        plaus, plaus_usable = dataset_field("Dataset with human rationales (empty: the dataset above, when it has "
                                            "them)", "", "card-plaus-data", optional=True)
    config = rc.CardConfig(checks=tuple(checks), limit=int(sizes["limit"]), sanity_limit=int(sizes["sanity_limit"]),
                           attack_limit=int(sizes["attack_limit"]), attack_steps=int(sizes["attack_steps"]),
                           known_feature_model=kf_model.strip() or None, known_feature_dataset=kf_data,
                           plausibility_dataset=plaus, protocol=protocol)
    if quick:
        q = rc.CardConfig.quick()
        config = rc.CardConfig.quick(**{**config.to_dict(), "checks": config.checks,
                                        **{k: getattr(q, k) for k in sizes}})
    usable = usable and kf_usable and plaus_usable
    return dataset if usable else None, [m for m in methods if is_known_spec(m)], config


def protocol_control(key: str) -> str:
    """The protocol of the checks (evaluation/suite/protocols.py); each check's name then says what it runs."""
    return st.selectbox("Protocol", list(PROTOCOLS), key=key, format_func=lambda p: f"{p}: {PROTOCOLS[p].label}",
                        help="default: ERASER AOPC (words deleted) on the dataset, layer randomization with the "
                             "model's initializer. paper-003: the thesis's Def. 2.1/2.2 (5/10/20/50 %, ceil, "
                             "[MASK], mean |delta p|) on the known-feature task, layer randomization from N(0, 1).")


def run_controls(model: str, dataset: str | None, methods: list[str], config: rc.CardConfig) -> str | None:
    """Start / resume / stop the card's background run (not while ``dataset`` is None); the run to show."""
    store = ResultStore()
    run_id = start_stop("card", RUN_KEY, lambda: rc.start_report_card(model, chosen_dataset(dataset), methods, config,
                                                                      store),
                        disabled=not methods or not config.checks or dataset is None, work=rc.check_cell,
                        label="Build (or resume) the report card")
    runs = store.list_runs(rc.KIND)
    return pick_run(store, runs, run_id, "card-show-run", model, "report cards", unit="checks")


def verdict_table(card: dict) -> pd.DataFrame:
    """Methods x checks, each cell 'verdict · mean [low, high]'."""
    labels = {r["check"]: r["label"] for r in card["rules"]}
    cells = {(r["method"], r["check"]): r for r in card["rows"]}
    return pd.DataFrame([{"method": method, **{labels[c]: _cell(cells.get((method, c))) for c in labels}}
                         for method in card["methods"]]).set_index("method")


def _cell(row: dict | None) -> str:
    if row is None:
        return "pending"
    return f"{row['verdict']} · {interval_text(row)}" if row["mean"] is not None else row["verdict"]


def _colour(text: str) -> str:
    verdict = text.split(" · ")[0]
    return f"background-color: {COLOURS[verdict]}" if verdict in COLOURS else ""


def show_card(store: ResultStore, run_id: str) -> dict | None:
    try:
        card = rc.card_from_store(store, run_id)
    except KeyError:
        st.error("This report card is no longer in the store.")
        return None
    st.caption(f"Model `{card['model']}` ({card['model_fingerprint']}) · dataset `{card['dataset']}` · protocol "
               f"`{card['protocol']}` ({card['protocol_label']}) · {card['status']}")
    names = {r["check"]: r["label"] for r in card["rules"]}
    for check, error in card["errors"].items():
        st.warning(f"The check '{names[check]}' failed: {error}. Build again to retry it.")
    st.subheader("Verdicts")
    st.dataframe(verdict_table(card).style.map(_colour), key=f"card-table-{run_id}")
    st.subheader("The rules")
    for rule in card["rules"]:
        st.markdown(f"**{rule['label']}** (`{rule['metric']}`, compared with {rule['reference']}"
                    f"{'' if rule['counts'] else '; not counted in the ordering'})")
        st.caption(rule["text"])
    details = pd.DataFrame([{"method": r["method"], "check": r["label"], "verdict": r["verdict"],
                             "value": interval_text(r), "reference": reference_text(r), "why / note":
                                 r["not_applicable"] or r.get("note") or ""} for r in card["rows"]])
    with st.expander("Every value, reference and note"):
        st.dataframe(details, hide_index=True, key=f"card-details-{run_id}")
    st.subheader("Ordering")
    st.caption(card["ordering_rule"])
    st.dataframe(pd.DataFrame([{"rank": o["rank"], "method": o["method"], "reasoning": o["reasoning"]}
                               for o in card["ordering"]]), hide_index=True, key=f"card-order-{run_id}")
    c1, c2 = st.columns(2)
    c1.download_button("Download JSON", json.dumps(card, indent=2, default=str), f"report-card-{run_id}.json",
                       "application/json", key=f"card-json-{run_id}")
    c2.download_button("Download HTML", card_html(card), f"report-card-{run_id}.html", "text/html",
                       key=f"card-html-{run_id}")
    return card


def side_by_side(store: ResultStore, current: str | None) -> None:
    """The orderings of several finished cards (different models), to see whether the ordering changes."""
    runs = [r for r in store.list_runs(rc.KIND) if r["done"] == r["total"]]
    if len(runs) < 2:
        st.caption("Build cards of two or more models to compare their orderings here.")
        return
    titles = {r["id"]: r["title"] for r in runs}
    chosen = st.multiselect("Cards to compare", list(titles), default=[i for i in [current] if i in titles],
                            format_func=titles.__getitem__, key="card-compare")
    if not chosen:
        return
    columns = st.columns(len(chosen))
    for column, run_id in zip(columns, chosen):
        card = rc.card_from_store(store, run_id)
        column.markdown(f"**{card['model']}** on `{card['dataset']}`")
        column.dataframe(pd.DataFrame([{"rank": o["rank"], "method": o["method"], "passes": o["passes"],
                                        "fails": o["fails"]} for o in card["ordering"]]), hide_index=True,
                         key=f"card-compare-{run_id}")
