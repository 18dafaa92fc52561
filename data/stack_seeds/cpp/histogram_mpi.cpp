#include <mpi.h>
#include <cstdio>
#include <vector>

// Each rank bins its slice of the data; the bins are summed on rank 0.
int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int bins = 16, n = 1 << 20;
    std::vector<long> local(bins, 0), global(bins, 0);
    for (int i = rank; i < n; i += size) {
        unsigned v = (unsigned)i * 2654435761u;
        local[v % bins]++;
    }
    MPI_Reduce(local.data(), global.data(), bins, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int b = 0; b < bins; ++b) std::printf("%d %ld\n", b, global[b]);
    MPI_Finalize();
}
