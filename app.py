"""Explanation Workbench: the Streamlit entry point (`streamlit run app.py`).

Runs the chosen page from app_pages/. Pages are discovered from their file names (``<order>_<Title>.py``),
so adding a page needs no change here; every page draws the shared sidebar itself (ui/widgets/sidebar.py).
The folder is not called ``pages/``: Streamlit would take that for an old-style pages folder until this script
first runs, so a deep link opened after a server start would run the page alone (an extra "app" entry in the
navigation, a narrow layout, another title).
A page that raises shows a short message with an id and logs its traceback (ui/widgets/page_guard.py): a user
never sees a traceback.
"""
from pathlib import Path

import settings

settings.prepare_runtime()

import streamlit as st  # noqa: E402

from ui.widgets.page_guard import run_guarded  # noqa: E402
from ui.widgets.share_link import shown  # noqa: E402

FAVICON = settings.ROOT / "assets" / "favicon.png"  # shipped: a Material-icon favicon is fetched from the web
st.set_page_config(page_title=settings.PRODUCT, page_icon=str(FAVICON), layout="wide")

PAGES_DIR = Path(__file__).resolve().parent / "app_pages"
PAGES = sorted(PAGES_DIR.glob("[0-9]*_*.py"), key=lambda path: int(path.name.split("_")[0]))  # 10 after 9
# a shared link may name its page as ?page=Faithfulness (ui/widgets/share_link.py): the page a bare address opens
ASKED = st.query_params.get("page")
WANTED = next((p for p in PAGES if p.stem.split("_", 1)[1] == ASKED), PAGES[0])
if ASKED and WANTED.stem.split("_", 1)[1] != ASKED:
    st.warning(f"The link's page {shown(ASKED)} is not a page of this app; showing "
               f"{WANTED.stem.split('_', 1)[1].replace('_', ' ')}.")
run_guarded(st.navigation([st.Page(str(path), default=(path == WANTED)) for path in PAGES]).run)
