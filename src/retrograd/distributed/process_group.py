"""The default process group (MPI's COMM_WORLD) and sub-groups, as torch.distributed's."""

from __future__ import annotations

from . import _check, _mpi


class ProcessGroup:
    """A set of ranks and their MPI communicator.  ``ranks`` are global (COMM_WORLD) ranks
    in group-rank order."""

    def __init__(self, comm, ranks):
        self.comm = comm
        self.ranks = list(ranks)
        self._group_rank_of = {g: i for i, g in enumerate(self.ranks)}

    def rank(self) -> int:
        return self.comm.Get_rank()

    def size(self) -> int:
        return self.comm.Get_size()

    def group_rank(self, global_rank: int, fn: str, arg: str) -> int:
        """The rank inside this group of a global rank (torch's src/dst are global)."""
        try:
            return self._group_rank_of[global_rank]
        except (KeyError, TypeError):
            raise ValueError(
                f"{fn}: {arg}={global_rank!r} is not a rank of this group (its global ranks "
                f"are {self.ranks}); pass one of them") from None

    def __repr__(self) -> str:
        return f"ProcessGroup(backend='mpi', ranks={self.ranks})"


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = object()


class _State:
    world: ProcessGroup | None = None
    groups: list = []


state = _State()


def _not_initialized(fn: str) -> ValueError:
    return ValueError(f"{fn}: Default process group has not been initialized, please make "
                      "sure to call init_process_group.")


def resolve(group, fn: str) -> ProcessGroup:
    """The group a collective runs on: ``group`` or the default one."""
    if state.world is None:
        raise _not_initialized(fn)
    if group is None or group is GroupMember.WORLD:
        return state.world
    if group is GroupMember.NON_GROUP_MEMBER:
        raise ValueError(f"{fn}: this rank is not a member of the group it was given")
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"{fn}: group must be a ProcessGroup from new_group() or None, "
                        f"got {type(group).__name__}")
    return group


def is_available() -> bool:
    """True when mpi4py is installed (retrograd.distributed's only backend is MPI)."""
    return _mpi.available()


def is_initialized() -> bool:
    return state.world is not None


def is_mpi_available() -> bool:
    return _mpi.available()


def init_process_group(backend: str | None = None, init_method=None, timeout=None,
                       world_size: int = -1, rank: int = -1, store=None,
                       group_name: str = "", pg_options=None, device_id=None) -> None:
    """Join the job's ranks: rank and world size come from the MPI launcher.

    ``mpiexec -n 4 python train.py`` gives four ranks; plain ``python train.py`` a world of
    one.  ``world_size``/``rank``, when given, must agree with MPI's.

    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi")          # doctest: +SKIP
    >>> dist.get_rank(), dist.get_world_size()  # doctest: +SKIP
    (0, 1)
    """
    if backend is not None and str(backend).lower() != "mpi":
        raise ValueError(f"init_process_group: backend={backend!r} is not available; "
                         "retrograd.distributed runs over MPI only: pass backend='mpi'")
    if state.world is not None:
        raise ValueError("init_process_group: trying to initialize the default process group "
                         "twice! Call destroy_process_group() first")
    if _check.env_error is not None:   # a bad RETROGRAD_/TORCH_DISTRIBUTED_DEBUG value
        raise _check.env_error
    MPI = _mpi.mpi()
    comm = MPI.COMM_WORLD
    size, me = comm.Get_size(), comm.Get_rank()
    if world_size not in (-1, None) and world_size != size:
        hint = (f"launch it with `mpiexec -n {world_size} python ...`" if size == 1 else
                f"pass world_size={size} or launch with -n {world_size}")
        raise RuntimeError(f"init_process_group: world_size={world_size} but the MPI launcher "
                           f"started {size} process(es); {hint}")
    if rank not in (-1, None) and rank != me:
        raise RuntimeError(f"init_process_group: rank={rank} but MPI gives this process rank "
                           f"{me}; leave rank unset, MPI assigns it")
    state.world = ProcessGroup(comm, range(size))
    state.groups = []
    if size > 1:
        _mpi.install_abort_hook()


def destroy_process_group(group=None) -> None:
    """Leave the default group (or free a sub-group's communicator)."""
    if group is not None and group is not GroupMember.WORLD:
        if isinstance(group, ProcessGroup):
            group.comm.Free()
            if group in state.groups:
                state.groups.remove(group)
        return
    if state.world is None:
        raise _not_initialized("destroy_process_group")
    for g in state.groups:
        g.comm.Free()
    state.groups = []
    state.world = None
    _mpi.remove_abort_hook()


def get_rank(group=None) -> int:
    """This process's rank in ``group`` (the default group when None); -1 outside it."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return resolve(group, "get_rank").rank()


def get_world_size(group=None) -> int:
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return resolve(group, "get_world_size").size()


def get_process_group_ranks(group) -> list[int]:
    return list(resolve(group, "get_process_group_ranks").ranks)


def get_backend(group=None) -> str:
    resolve(group, "get_backend")
    return "mpi"


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None):
    """A sub-group of the given global ranks (every rank of the world must call it).

    Ranks outside it get ``GroupMember.NON_GROUP_MEMBER``, as in PyTorch.
    """
    world = resolve(None, "new_group")
    size = world.size()
    ranks = list(range(size)) if ranks is None else sorted(int(r) for r in ranks)
    bad = [r for r in ranks if not 0 <= r < size]
    if bad or len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: ranks {ranks} must be distinct ranks in [0, {size})")
    MPI = _mpi.mpi()
    me = world.rank()
    color = 0 if me in ranks else MPI.UNDEFINED
    comm = world.comm.Split(color, ranks.index(me) if me in ranks else 0)
    if comm == MPI.COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    group = ProcessGroup(comm, ranks)
    state.groups.append(group)
    return group
