"""Opt-in fallback to the Hugging Face hub for datasets with a known parquet copy there.

Only used when the local data folder is missing and the user set EXWB_ALLOW_HUB=1.
"""
from __future__ import annotations

import settings
from corpora.locate import find_dataset_dir
from corpora.records import DataError

# dataset -> (hub repository, file inside it per split, column names)
HUB_COPIES = {
    "sst2": ("stanfordnlp/sst2", "data/{split}-00000-of-00001.parquet", {"dev": "validation"}),
    "snli": ("stanfordnlp/snli", "plain_text/{split}-00000-of-00001.parquet", {"dev": "validation"}),
}


def hub_frame(name: str, split: str):
    """A pandas DataFrame of one split downloaded from the hub, or a DataError."""
    if not settings.allow_hub() or name not in HUB_COPIES:
        raise DataError(f"No local copy of '{name}' and no hub copy allowed or known.")
    repo, pattern, renames = HUB_COPIES[name]
    import pandas as pd  # deferred (heavy, optional): only a hub download needs pandas and huggingface_hub
    from huggingface_hub import hf_hub_download

    try:
        path = hf_hub_download(repo, pattern.format(split=renames.get(split, split)), repo_type="dataset")
    except Exception as error:  # network, missing file, auth: all mean "not available"
        raise DataError(f"Could not fetch '{name}:{split}' from the Hugging Face hub ({repo}): {error}") from error
    return pd.read_parquet(path)


def local_folder_or_hub_frame(folder_name: str, hub_name: str, split: str):
    """``(folder, None)`` for the local data folder, else ``(None, frame)`` with the hub's copy of the split; when
    neither exists, the local folder's error (it says where the data was looked for)."""
    try:
        return find_dataset_dir(folder_name), None
    except DataError as local_error:
        try:
            return None, hub_frame(hub_name, split)
        except DataError:
            raise local_error from None
