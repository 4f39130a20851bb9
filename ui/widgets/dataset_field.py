"""The fields where a user names a dataset, checked before any job starts: a bad name fails at once, not after a queue.

In shared-server mode (EXWB_SHARED=1) no field takes free text: the user picks a built-in dataset, an upload, or
a file of the admin's folders (EXWB_DATA_FOLDERS) by name. Otherwise a typed id (``name:split`` or
``file:<path>``) is checked by ``corpora.check_dataset_id`` (which asks ``corpora.file_access`` about paths) and
a refusal is shown with ``st.error``: the caller gets ``ok=False`` and must not start its job.
"""
from __future__ import annotations

import streamlit as st

import settings
from corpora import DATASETS, DataError, check_dataset_id
from corpora.file_access import shared_files, shown_name
from ui.widgets import loaders
from ui.widgets.state import kept
from ui.widgets.uploads import accept_upload

SESSION_FILE = "keep:dataset_file"  # the session's user file, shared by the sidebar and Error analysis
UPLOAD = "upload a file"
NONE = "(none)"
FILE_TYPES = ["csv", "tsv", "jsonl", "parquet"]  # parquet: read by the same isolated parser
UPLOAD_HELP = ("A .csv / .tsv / .jsonl / .parquet file: a 'text' column; optional 'label' (the model's label names or "
               "class indices), 'pair', 'rationale'")


def checked(dataset_id: str) -> str | None:
    """``dataset_id`` when it may be loaded; None, with the reason shown (full width, under the field's row),
    otherwise."""
    try:
        check_dataset_id(dataset_id)
    except DataError as error:
        st.error(str(error))
        return None
    return dataset_id


def _label(option: str) -> str:
    if option.startswith("file:"):
        return f"shared file: {shown_name(option[5:])}"
    name = option.partition(":")[0]
    return f"{option}: {DATASETS[name].title}" if name in DATASETS else option


def built_in_ids() -> list[str]:
    return [f"{name}:{split}" for name, info in DATASETS.items() for split in info.splits]


def _upload(key: str, container) -> str | None:
    upload = container.file_uploader("Your file", type=FILE_TYPES, key=f"{key}-upload", help=UPLOAD_HELP)
    return accept_upload(upload) if upload is not None else None


def session_file(pick_key: str, upload_key: str, upload_label: str = UPLOAD_HELP) -> str | None:
    """The session's user file (the sidebar's and Error analysis's "your file"): in shared mode with folders the
    admin opened, a file of theirs picked by name; otherwise (or "upload a file") the last upload."""
    files = [f"file:{p}" for p in shared_files()] if settings.shared_mode() else []
    if files:
        choice = kept(st.selectbox, "File", pick_key, UPLOAD, [UPLOAD] + files, format_func=_label)
        if choice != UPLOAD:
            st.session_state[SESSION_FILE] = choice
            return choice
        if st.session_state.get(SESSION_FILE) in files:  # back to uploads: the picked file is no longer the input
            st.session_state.pop(SESSION_FILE)
    upload = st.file_uploader(upload_label, type=FILE_TYPES, key=upload_key)
    if upload is not None and (dataset_id := accept_upload(upload)) is not None:
        st.session_state[SESSION_FILE] = dataset_id
    return st.session_state.get(SESSION_FILE)


def file_field(key: str, container=st) -> str | None:
    """A user file as a dataset id: in shared mode an upload or a shared file, otherwise a typed path (checked).
    None while nothing usable is given."""
    if settings.shared_mode():
        options = [UPLOAD] + [f"file:{p}" for p in shared_files()]
        choice = container.selectbox("File", options, key=f"{key}-shared", format_func=_label)
        return _upload(key, container) if choice == UPLOAD else choice
    path = container.text_input("Path", key=key, placeholder="/data/mine.jsonl").strip()
    return checked(f"file:{path}") if path else None


def dataset_field(label: str, default: str, key: str, help: str | None = None, optional: bool = False,
                  container=st) -> tuple[str | None, bool]:
    """(the dataset id, or None when left empty or not usable; whether the caller may start its job).

    ``optional``: empty is allowed (the caller has a default); ``default`` is then usually ""."""
    if settings.shared_mode():
        options = ([NONE] if optional else []) + built_in_ids() + [f"file:{p}" for p in shared_files()] + [UPLOAD]
        choice = container.selectbox(label, options, options.index(default) if default in options else 0, key=key,
                                     format_func=_label, help="a built-in dataset, a file the administrator shared, "
                                                              "or an upload")
        if choice == UPLOAD:
            dataset_id = _upload(key, container)
            return dataset_id, dataset_id is not None
        return (None, True) if choice == NONE else (choice, True)
    text = container.text_input(label, default, key=key, help=help).strip()
    if not text:
        return None, optional
    dataset_id = checked(text)
    return dataset_id, dataset_id is not None


def readable(dataset_id: str, label_names: tuple[str, ...] | None = None) -> str | None:
    """``dataset_id`` once its file was read (in a worker process, with progress: ``loaders.dataset``); None, with
    the reason shown, otherwise. A file not in UTF-8 gets a note saying how it was read."""
    try:
        examples = loaders.dataset(dataset_id, label_names)
    except DataError as error:
        st.error(str(error))
        return None
    if examples and examples[0].extra.get("file_note"):
        st.info(examples[0].extra["file_note"])
    return dataset_id


def dataset_picker(key: str, label: str = "Dataset", columns=None, name_key: str | None = None) -> str | None:
    """A built-in dataset and its split, an upload, or in shared mode a file of the admin's folders (the choices
    ``dataset_field`` offers), a file read before it is returned. None while nothing usable is chosen.
    ``columns``: the two containers of the name and the split (default: two new columns)."""
    files = [f"file:{p}" for p in shared_files()] if settings.shared_mode() else []
    c1, c2 = columns or st.columns([3, 1])
    name = c1.selectbox(label, list(DATASETS) + files + [UPLOAD], key=name_key or key,
                        format_func=lambda n: f"{n}: {DATASETS[n].title}" if n in DATASETS else
                        "upload a CSV / TSV / JSONL / Parquet file" if n == UPLOAD else _label(n))
    if name in DATASETS:
        splits, default = DATASETS[name].splits, DATASETS[name].default_split
        split = c2.selectbox("Split", splits, list(splits).index(default), key=f"{key}-split-{name}")
        return f"{name}:{split}"
    if name == UPLOAD:
        upload = st.file_uploader(UPLOAD_HELP, type=FILE_TYPES, key=f"{key}-upload")
        name = accept_upload(upload) if upload is not None else None
    return readable(name) if name else None
