// Tensor layout helpers and persistent (backend-owned) tensors.
#include "rocmforge/buffer_slab.h"
#include "rocmforge/error.h"
#include "rocmforge/graph.h"
#include "rocmforge/types.h"

namespace rf {

void init_tensor_layout(rf_tensor &t, int type, const int64_t ne[4]) {
    const TypeTraits *tr = type_traits(type);
    if (!tr) throw Error("unknown tensor type id " + std::to_string(type));
    if (ne[0] % tr->block_size != 0)
        throw Error(std::string("row length ") + std::to_string(ne[0]) + " is not a multiple of the " +
                    tr->name + " block size " + std::to_string(tr->block_size));
    t.type = type;
    for (int i = 0; i < 4; ++i) t.ne[i] = ne[i];
    t.nb[0] = static_cast<int64_t>(tr->type_size);
    t.nb[1] = static_cast<int64_t>(row_size(type, ne[0]));
    t.nb[2] = t.nb[1] * ne[1];
    t.nb[3] = t.nb[2] * ne[2];
}

void init_tensor_layout(rf_tensor &t, int type, std::initializer_list<int64_t> ne) {
    int64_t d[4] = {1, 1, 1, 1};
    int i = 0;
    for (int64_t v : ne) {
        if (i == 4) throw Error("tensors have at most 4 dimensions");
        d[i++] = v;
    }
    init_tensor_layout(t, type, d);
}

uint64_t Tensor::nbytes() const { return static_cast<uint64_t>(t.nb[1]) * t.ne[1] * t.ne[2] * t.ne[3]; }

bool Tensor::contiguous() const {
    return t.nb[2] == t.nb[1] * t.ne[1] && t.nb[3] == t.nb[2] * t.ne[2] &&
           t.nb[1] == static_cast<int64_t>(row_size(t.type, t.ne[0]));
}

PersistentTensor::PersistentTensor(Backend &backend, std::string name, int type,
                                   std::initializer_list<int64_t> ne, BufferSlab *slab) {
    init_tensor_layout(tensor_.t, type, ne);
    tensor_.kind = TensorKind::Persistent;
    tensor_.home = &backend;
    tensor_.name = std::move(name);
    buffer_ = slab ? slab->take(tensor_.nbytes()) : backend.alloc(tensor_.nbytes());
    tensor_.t.data = buffer_.base;
    tensor_.t.buffer = buffer_.handle;
    tensor_.t.name = tensor_.name.c_str();
}

PersistentTensor::PersistentTensor(Backend &backend, std::string name, int type, const int64_t ne[4],
                                   const void *host_bytes, BufferSlab *slab) {
    init_tensor_layout(tensor_.t, type, ne);
    tensor_.kind = TensorKind::Persistent;
    tensor_.home = &backend;
    tensor_.name = std::move(name);
    tensor_.t.flags = RF_TENSOR_WEIGHT;
    buffer_ = backend.wrap_or_upload(const_cast<void *>(host_bytes), tensor_.nbytes(), slab);
    tensor_.t.data = buffer_.base;
    tensor_.t.buffer = buffer_.handle;
    tensor_.t.name = tensor_.name.c_str();
}

PersistentTensor::~PersistentTensor() {
    if (tensor_.home) tensor_.home->free(buffer_);
}

} // namespace rf
