"""Where the app keeps its data (models, speakers, settings) and its cache (the results' audio).
Movable with CHATTTS_STUDIO_HOME."""

import os
from pathlib import Path

import platformdirs

APP_NAME = "chattts-studio"
HOME_ENV = "CHATTTS_STUDIO_HOME"


def data_dir() -> Path:
    """The data folder: $CHATTTS_STUDIO_HOME when set, else the platform's user data folder."""
    override = os.environ.get(HOME_ENV)
    path = Path(override) if override else Path(platformdirs.user_data_dir(APP_NAME, False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_dir() -> Path:
    """The cache folder: $CHATTTS_STUDIO_HOME/cache when that is set (tests, portable
    installs), else the platform's user cache folder."""
    override = os.environ.get(HOME_ENV)
    path = (
        Path(override) / "cache" if override else Path(platformdirs.user_cache_dir(APP_NAME, False))
    )
    path.mkdir(parents=True, exist_ok=True)
    return path


def models_dir() -> Path:
    path = data_dir() / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path


def speakers_file() -> Path:
    return data_dir() / "speakers.json"
