"""Serving the speech API as Ray Serve replicas (`serve --ray [ADDRESS]`): join or start a
cluster, size the replicas to it, deploy the application (core/serve/replicas) behind Ray
Serve's HTTP proxies, and take it down again; or write the same application as a config file
for `serve deploy`."""

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chattts_studio.core.atomic import write_text_atomic
from chattts_studio.core.cluster import connect, ray_module, shutdown
from chattts_studio.core.errors import StudioError
from chattts_studio.core.serve.replicas.spec import (
    APP_NAME,
    DEPLOYMENT,
    IMPORT_PATH,
    ReplicaSpec,
    Sizing,
)


class ReplicaService:
    """start() deploys (and returns once every replica is up), close() takes it down;
    serve() does both around a wait for Ctrl+C. `spec` is the replicas as the cluster got
    them once started (sized: device and scaling settled)."""

    def __init__(
        self, spec: ReplicaSpec, sizing: Sizing, address: str | None = None, **init: Any
    ) -> None:
        """`init`: more ray.init arguments when no cluster runs yet (num_cpus, in tests). A
        local Ray gets the proxy's Host and Origin rules for Serve's own routes."""
        from chattts_studio.core.serve.replicas.proxy import proxy_env

        init.setdefault("local_env", proxy_env(spec.access()))
        self.spec, self.sizing, self.address, self.init = spec, sizing, address, init
        self._started_ray = False
        self._deployed = False

    def start(self) -> None:
        ray = ray_module()
        from ray import serve

        from chattts_studio.core.serve.replicas.deployment import build

        # Serve's progress lines (INFO) would bury the one line `serve` prints when ready.
        logging.getLogger("ray.serve").setLevel(logging.WARNING)
        self._started_ray = connect(self.address, **self.init)
        try:
            self.spec = self.sizing.sized(self.spec, ray.cluster_resources())
            serve.start(http_options={"host": self.spec.host, "port": self.spec.port})
            self._deployed = True
            serve.run(build(self.spec.args()), name=APP_NAME, route_prefix="/")
        except RuntimeError as exc:  # the application failed to deploy: Ray says why
            self.close()
            raise StudioError(f"The speech API's replicas did not start: {_reason(exc)}") from None
        except BaseException:
            self.close()
            raise

    def serve(self, on_listening: Callable[[], None]) -> None:
        """Deploy, then serve until interrupted (Ctrl+C); take everything down after."""
        self.start()
        try:
            on_listening()
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
        finally:
            self.close()

    def close(self) -> None:
        """The application, and Serve and Ray when this service started Ray (a cluster that
        was running already keeps running: other applications may be on it)."""
        ray = ray_module()
        from ray import serve

        if self._deployed and ray.is_initialized():
            self._deployed = False
            try:
                if self._started_ray:
                    serve.shutdown()
                else:
                    serve.delete(APP_NAME)
            except Exception:  # the cluster is gone already
                pass
        if self._started_ray:
            self._started_ray = False
            shutdown()  # Ray, and whatever of the local Ray outlives ray.shutdown()


def _reason(exc: BaseException) -> str:
    """The replica's own sentence when its constructor raised one (a model that will not
    load, a key refused), else Ray's first line."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    said = [line for line in lines if "StudioError: " in line]
    if said:
        return said[-1].split("StudioError: ", 1)[1]
    return lines[0] if lines else type(exc).__name__


def deploy_config(spec: ReplicaSpec) -> dict[str, Any]:
    """A Ray Serve config (`serve deploy FILE`) for the replicas of `spec` (sized): the
    proxies' address, the application's import path and args (never the key: each replica
    reads it from `api_key_file` or $CHATTTS_STUDIO_API_KEY on its machine), and the
    deployment's options, which `serve deploy` takes over those in the code."""
    return {
        "proxy_location": "EveryNode",
        "http_options": {"host": spec.host, "port": spec.port},
        "applications": [
            {
                "name": APP_NAME,
                "route_prefix": "/",
                "import_path": IMPORT_PATH,
                "args": spec.args(with_key=False),
                "deployments": [{"name": DEPLOYMENT, **spec.deployment_options()}],
            }
        ],
    }


def write_config(spec: ReplicaSpec, path: Path) -> None:
    """The config as JSON (which YAML reads as it is), written whole or not at all."""
    text = json.dumps(deploy_config(spec), indent=2) + "\n"
    try:
        write_text_atomic(path, text)
    except OSError as exc:
        raise StudioError(f"Cannot write {path}: {exc.strerror or exc}.") from None
