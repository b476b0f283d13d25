#!/usr/bin/env python3
"""fluxjac's Jacobian by JAX: jit(vmap(jacfwd)) of the same Roe flux, assembled into fluxjac's block-CSR layout.

    python3 scripts/peers/roe_jax.py --mesh MESH.h5 [--check J.h5] [-o OUT.h5] [--device auto|gpu|cpu]
                                     [--warmup 3] [--reps 20] [--baseline RESULTS.json] [--json FILE]

The flux of one edge, F(UL, UR, n) times its area, is differentiated with respect to its ten inputs by `jax.jacfwd`
(forward mode) and mapped over the edges by `jax.vmap`, under `jax.jit`, in float64 (jax_enable_x64). The blocks are
assembled on the device by the four-block rule (`.at[].add` into Adiag, `.at[].set` into Aoff), timed apart.
What is shared with the PyTorch peer (reading, the flux, assembly, check, table, record): scripts/peers/common.py.
Exit codes: 0 ok, 1 the check failed, 2 invalid input or usage, 3 --device gpu without a GPU, 77 JAX missing.
"""

import sys

import common

PEER, METHOD = "jax", "jit(vmap(jacfwd))"


def main(argv=None):
    arguments = common.parse_arguments(PEER, METHOD, argv)
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as missing:
        common.framework_missing(PEER, missing.name or "jax", "pip install jax (jax[cuda13] for the GPU)")
    jax.config.update("jax_enable_x64", True)  # fluxjac's arithmetic is double; JAX defaults to float32

    gpu = jax.default_backend() == "gpu"
    if arguments.device == "gpu" and not gpu:
        print(f"{PEER}: --device gpu, but JAX sees no GPU (backend {jax.default_backend()})", file=sys.stderr)
        return common.EXIT_NO_DEVICE
    device = jax.devices()[0] if gpu and arguments.device != "cpu" else jax.devices("cpu")[0]

    ops = common.ArrayOps(
        sqrt=jnp.sqrt, where=jnp.where, less=lambda a, b: a < b,
        zeros=lambda shape, dtype: jnp.zeros(shape, dtype=dtype),
        index_add=lambda target, index, values: target.at[index].add(values),
        put=lambda target, index, values: target.at[index].set(values),
        stack=lambda parts: jnp.stack(parts, axis=-1), float32=lambda x: x.astype(jnp.float32))

    def edge_flux(U, normal, area):
        """A F(UL, UR, n) of one edge; U = (UL, UR), ten values."""
        return area * jnp.stack(common.roe_flux(ops, U[:5], U[5:], normal[0], normal[1], normal[2]))

    differentiated = jax.vmap(jax.jacfwd(edge_flux), in_axes=(0, 0, 0))

    @jax.jit
    def blocks(Q, edges, normals, areas):
        J = differentiated(jnp.concatenate([Q[edges[:, 0]], Q[edges[:, 1]]], axis=1), normals, areas)
        return J[:, :, :5], J[:, :, 5:]

    def assemble_on_device(n_nodes, nnz):
        return jax.jit(lambda edges, slot_lr, slot_rl, JL, JR: common.assemble(
            ops, n_nodes, nnz, edges[:, 0], edges[:, 1], slot_lr, slot_rl, JL, JR))

    def prepare(mesh, pattern):
        put = lambda array: jax.device_put(array, device)  # noqa: E731
        return {"Q": put(mesh.Q), "edges": put(mesh.edges), "normals": put(mesh.normals), "areas": put(mesh.areas),
                "slot_lr": put(pattern.slot_lr), "slot_rl": put(pattern.slot_rl),
                "assemble": assemble_on_device(mesh.n_nodes, int(pattern.col_idx.size))}

    peer = common.Peer(
        name=PEER, method=METHOD, framework=f"jax {jax.__version__}",
        device=getattr(device, "device_kind", str(device)),
        prepare=prepare,
        blocks=lambda x: blocks(x["Q"], x["edges"], x["normals"], x["areas"]),
        assemble=lambda x, JL, JR: x["assemble"](x["edges"], x["slot_lr"], x["slot_rl"], JL, JR),
        to_host=lambda array: common.np.asarray(array),
        synchronize=jax.block_until_ready)
    return common.run(peer, arguments)


if __name__ == "__main__":
    sys.exit(main())
