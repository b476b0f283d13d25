#!/usr/bin/env python3
"""fluxjac's Jacobian by PyTorch: torch.func vmap(jacfwd) of the same Roe flux, assembled into fluxjac's block-CSR
layout.

    python3 scripts/peers/roe_torch.py --mesh MESH.h5 [--check J.h5] [-o OUT.h5] [--device auto|gpu|cpu]
                                       [--warmup 3] [--reps 20] [--baseline RESULTS.json] [--json FILE]

The flux of one edge, F(UL, UR, n) times its area, is differentiated with respect to its ten inputs by `jacfwd`
(forward mode, dual tensors) and mapped over the edges by `vmap`, eagerly, in float64. Both come from `torch.func`
(PyTorch 2), or from `functorch`, the same functions under their earlier name (PyTorch 1.13, Debian 12's
python3-torch). The blocks are assembled on the device by the four-block rule (`index_add_` into Adiag, indexed
stores into Aoff), timed apart. What is shared with the JAX peer: scripts/peers/common.py.
Exit codes: 0 ok, 1 the check failed, 2 invalid input or usage, 3 --device gpu without a GPU, 77 PyTorch missing.
"""

import sys

import common

PEER = "torch"


def main(argv=None):
    try:
        import torch
        try:
            from torch.func import jacfwd, vmap
            method = "torch.func vmap(jacfwd)"
        except ImportError:
            from functorch import jacfwd, vmap
            method = "functorch vmap(jacfwd)"
    except ImportError as missing:
        arguments = common.parse_arguments(PEER, "vmap(jacfwd)", argv)
        common.framework_missing(PEER, missing.name or "torch",
                                 "PyTorch 2 with torch.func, or 1.13 with functorch: Debian's python3-torch")
    arguments = common.parse_arguments(PEER, method, argv)

    gpu = torch.cuda.is_available()
    if arguments.device == "gpu" and not gpu:
        print(f"{PEER}: --device gpu, but PyTorch sees no GPU (torch.cuda.is_available() is False)", file=sys.stderr)
        return common.EXIT_NO_DEVICE
    device = torch.device("cuda" if gpu and arguments.device != "cpu" else "cpu")
    dtypes = {"float64": torch.float64, "float32": torch.float32}

    def index_add(target, index, values):
        return target.index_add_(0, index, values)

    def put(target, index, values):
        target[index] = values
        return target

    ops = common.ArrayOps(
        sqrt=torch.sqrt, where=torch.where, less=lambda a, b: a < b,
        zeros=lambda shape, dtype: torch.zeros(shape, dtype=dtypes[dtype], device=device),
        index_add=index_add, put=put, stack=lambda parts: torch.stack(parts, dim=-1),
        float32=lambda x: x.to(torch.float32))

    def edge_flux(U, normal, area):
        """A F(UL, UR, n) of one edge; U = (UL, UR), ten values."""
        return area * torch.stack(common.roe_flux(ops, U[:5], U[5:], normal[0], normal[1], normal[2]))

    differentiated = vmap(jacfwd(edge_flux), in_dims=(0, 0, 0))

    def blocks(x):
        J = differentiated(torch.cat([x["Q"][x["L"]], x["Q"][x["R"]]], dim=1), x["normals"], x["areas"])
        return J[:, :, :5], J[:, :, 5:]

    def prepare(mesh, pattern):
        put_on = lambda array: torch.from_numpy(common.np.ascontiguousarray(array)).to(device)  # noqa: E731
        return {"Q": put_on(mesh.Q), "L": put_on(mesh.edges[:, 0]), "R": put_on(mesh.edges[:, 1]),
                "normals": put_on(mesh.normals), "areas": put_on(mesh.areas), "slot_lr": put_on(pattern.slot_lr),
                "slot_rl": put_on(pattern.slot_rl), "n_nodes": mesh.n_nodes, "nnz": int(pattern.col_idx.size)}

    def synchronize(result):
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    peer = common.Peer(
        name=PEER, method=method, framework=f"torch {torch.__version__}",
        device=torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU",
        prepare=prepare, blocks=blocks,
        assemble=lambda x, JL, JR: common.assemble(ops, x["n_nodes"], x["nnz"], x["L"], x["R"], x["slot_lr"],
                                                   x["slot_rl"], JL, JR),
        to_host=lambda tensor: tensor.cpu().numpy(),
        synchronize=synchronize)
    with torch.no_grad():
        return common.run(peer, arguments)


if __name__ == "__main__":
    sys.exit(main())
