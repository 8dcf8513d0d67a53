// The GPU backend's host copies through the ABI: uploads whose source is overwritten as soon as
// they return (the HIP plugin queues small ones from pinned staging memory without waiting,
// memory.h upload()), more of them than the staging memory holds between two waits, then read
// back. A staged upload read from reused staging memory, or a source read after it was
// overwritten, shows as wrong bytes.
#pragma once
#include "plugin_handle.h"

namespace opcheck {

// Prints one line per check ("ok" / "FAIL"), counts them.
void check_copies(Plugin &gpu, int &passed, int &failed);

} // namespace opcheck
