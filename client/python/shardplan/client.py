"""shardplan.Client: the daemon's gRPC API (shardplan.v1.Planner + grpc.health.v1.Health).

    client = shardplan.Client("127.0.0.1:50051", token=None)
    plan = client.plan(mlir_text, search=True, cluster="one_machine_8gpu")

Every call maps gRPC failures to one exception of shardplan.errors naming the cause (no daemon,
bad address, wrong token, module rejected, ...). The stubs are generated from proto/ at build
time (modules shardplan.v1.*_pb2 and shardplan.health.health_pb2).
"""
from __future__ import annotations

import json
import os
import socket
from typing import Iterator, Optional, Union

import grpc

from . import errors
from .plan import Plan

ClusterArg = Union[None, str, dict]


def _split_address(address: str) -> tuple[str, int]:
    if not isinstance(address, str) or not address:
        raise errors.BadAddress(f"bad daemon address {address!r}: expected HOST:PORT")
    a = address
    for scheme in ("dns:///", "ipv4:", "ipv6:"):
        if a.startswith(scheme):
            a = a[len(scheme):]
    if a.startswith("["):  # [::1]:50051
        host, _, port = a[1:].partition("]:")
    else:
        host, _, port = a.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise errors.BadAddress(f"bad daemon address {address!r}: expected HOST:PORT with a "
                                f"port from 1 to 65535")
    return host, int(port)


def cluster_message(cluster: ClusterArg):
    """A shardplan.v1.Cluster from a bundled example name, a JSON file path, a JSON text or a
    dict in the format of docs/cluster-format.md; None stays None."""
    from .v1 import cluster_pb2
    if cluster is None:
        return None
    if isinstance(cluster, dict):
        return cluster_pb2.Cluster(json=json.dumps(cluster))
    if isinstance(cluster, str):
        if cluster.lstrip().startswith("{"):
            return cluster_pb2.Cluster(json=cluster)
        if os.path.exists(cluster):
            with open(cluster) as f:
                return cluster_pb2.Cluster(json=f.read())
        if cluster.endswith(".json"):
            raise FileNotFoundError(f"cluster file {cluster!r} does not exist")
        return cluster_pb2.Cluster(example=cluster)
    raise TypeError(f"cluster must be a name, a path, JSON text or a dict, not "
                    f"{type(cluster).__name__}")


class Client:
    """A connection to shardpland. `address` is HOST:PORT; `token` the daemon's bearer token
    (its --token), if it has one; `timeout` the default deadline of each call in seconds."""

    def __init__(self, address: str = "127.0.0.1:50051", token: Optional[str] = None, *,
                 timeout: float = 120.0, root_certificates: Optional[bytes] = None,
                 tls: bool = False):
        from .health import health_pb2_grpc
        from .v1 import planner_pb2_grpc
        host, port = _split_address(address)
        try:
            socket.getaddrinfo(host, port)
        except socket.gaierror as e:
            raise errors.BadAddress(f"bad daemon address {address!r}: host {host!r} does not "
                                    f"resolve ({e.strerror})") from None
        self.address = address
        self.timeout = timeout
        opts = [("grpc.max_receive_message_length", 256 << 20),
                ("grpc.max_send_message_length", 256 << 20)]
        if tls or root_certificates:
            creds = grpc.ssl_channel_credentials(root_certificates=root_certificates)
            self._channel = grpc.secure_channel(address, creds, options=opts)
        else:
            self._channel = grpc.insecure_channel(address, options=opts)
        self._planner = planner_pb2_grpc.PlannerStub(self._channel)
        self._health = health_pb2_grpc.HealthStub(self._channel)
        self._metadata = [("authorization", f"Bearer {token}")] if token else []

    # ---------------------------------------------------------------- plumbing

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _error(self, e: grpc.RpcError, what: str) -> errors.ShardplanError:
        code = e.code() if hasattr(e, "code") else None
        name = code.name if code else None
        details = (e.details() if hasattr(e, "details") else str(e)) or ""
        where = f"{what} at {self.address}"
        if code == grpc.StatusCode.UNAVAILABLE:
            md = dict(e.trailing_metadata() or ()) if hasattr(e, "trailing_metadata") else {}
            if "retry-after-ms" in md:
                err = errors.ServerBusy(f"{where}: the daemon is busy ({details}); retry after "
                                        f"{md['retry-after-ms']} ms", name, details)
                err.retry_after_ms = int(md["retry-after-ms"])
                return err
            if "DNS resolution failed" in details or "Name or service not known" in details:
                return errors.BadAddress(f"{where}: the host does not resolve ({details})",
                                         name, details)
            return errors.DaemonUnavailable(
                f"{where}: no shardplan daemon answers there (is shardpland running, and on "
                f"this port?): {details}", name, details)
        if code == grpc.StatusCode.UNAUTHENTICATED:
            return errors.AuthenticationError(
                f"{where}: the daemon refused the bearer token (pass token= the daemon's "
                f"--token): {details}", name, details)
        if code == grpc.StatusCode.INVALID_ARGUMENT:
            return errors.ModuleRejected(f"{where}: rejected: {details}", name, details)
        if code == grpc.StatusCode.NOT_FOUND:
            return errors.PlanNotFound(f"{where}: {details}", name, details)
        if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
            return errors.RequestTooLarge(f"{where}: {details}", name, details)
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            return errors.DeadlineExceeded(f"{where}: no plan within the deadline: {details}",
                                           name, details)
        return errors.PlanningFailed(f"{where}: {name}: {details}", name, details)

    def _call(self, method, request, what: str, timeout: Optional[float] = None):
        try:
            return method(request, timeout=timeout or self.timeout, metadata=self._metadata)
        except grpc.RpcError as e:
            raise self._error(e, what) from None

    # ---------------------------------------------------------------- requests

    def plan_request(self, module: str, *, search: bool = False, cluster: ClusterArg = None,
                     mesh: Optional[str] = None, time_limit: float = 0.0, full: bool = True,
                     filename: str = "", keep_mesh: bool = True, **options):
        from .v1 import planner_pb2 as pb
        opts = pb.PlanOptions(
            mode=pb.PLAN_MODE_SEARCH if search else pb.PLAN_MODE_PROPAGATE,
            time_limit_seconds=time_limit, mesh=mesh or "",
            placement=pb.PLACEMENT_GIVEN if keep_mesh else pb.PLACEMENT_AUTO,
            mesh_shape=pb.MESH_SHAPE_GIVEN if keep_mesh else pb.MESH_SHAPE_AUTO, **options)
        req = pb.PlanRequest(mlir=module, options=opts, filename=filename,
                             detail=pb.DETAIL_FULL if full else pb.DETAIL_SUMMARY)
        c = cluster_message(cluster)
        if c is not None:
            req.cluster.CopyFrom(c)
        return req

    def plan(self, module: str, *, search: bool = False, cluster: ClusterArg = None,
             mesh: Optional[str] = None, time_limit: float = 0.0, timeout: Optional[float] = None,
             filename: str = "", **options) -> Plan:
        """Plans an MLIR module (StableHLO + sdy text) in one call. search=False: Shardy's
        propagation pipeline only; search=True: the same pipeline (func.call ops included),
        then the cost search for `cluster`. The mesh shape and device order in the module are
        kept."""
        req = self.plan_request(module, search=search, cluster=cluster, mesh=mesh,
                                time_limit=time_limit, filename=filename, **options)
        return Plan.from_response(self._call(self._planner.Plan, req, "Plan", timeout))

    def plan_stream(self, module: str, *, timeout: Optional[float] = None,
                    **kw) -> Iterator[Union[dict, Plan]]:
        """Like plan(), streaming: yields a dict per progress event (stage, round, incumbent,
        bound, gap, elapsed_seconds, message), then the Plan."""
        req = self.plan_request(module, **kw)
        try:
            for ev in self._planner.PlanStream(req, timeout=timeout or self.timeout,
                                               metadata=self._metadata):
                if ev.HasField("plan"):
                    yield Plan.from_response(ev.plan)
                else:
                    p = ev.progress
                    yield {"stage": p.stage, "round": p.round, "incumbent": p.incumbent,
                           "bound": p.bound, "gap": p.gap,
                           "elapsed_seconds": p.elapsed_seconds, "message": p.message}
        except grpc.RpcError as e:
            raise self._error(e, "PlanStream") from None

    def get(self, key: str, *, full: bool = True) -> Plan:
        from .v1 import planner_pb2 as pb
        req = pb.GetPlanRequest(key=key, detail=pb.DETAIL_FULL if full else pb.DETAIL_SUMMARY)
        return Plan.from_response(self._call(self._planner.GetPlan, req, "GetPlan"))

    def list(self, page_size: int = 0) -> list:
        """Every cached plan (PlanInfo messages), following the pages."""
        from .v1 import planner_pb2 as pb
        out, token = [], ""
        while True:
            resp = self._call(self._planner.ListPlans,
                              pb.ListPlansRequest(page_size=page_size, page_token=token),
                              "ListPlans")
            out.extend(resp.plans)
            token = resp.next_page_token
            if not token:
                return out

    def delete(self, key: str) -> bool:
        from .v1 import planner_pb2 as pb
        return self._call(self._planner.DeletePlan, pb.DeletePlanRequest(key=key),
                          "DeletePlan").deleted

    def stats(self):
        """The daemon's counters (a shardplan.v1.Stats message)."""
        from .v1 import planner_pb2 as pb
        return self._call(self._planner.GetStats, pb.GetStatsRequest(), "GetStats")

    def health(self, service: str = "") -> str:
        """The health status name: "SERVING", "NOT_SERVING", ..."""
        from .health import health_pb2 as hpb
        resp = self._call(self._health.Check, hpb.HealthCheckRequest(service=service),
                          "Health.Check", timeout=min(self.timeout, 10.0))
        return hpb.HealthCheckResponse.ServingStatus.Name(resp.status)
