# SPDX-License-Identifier: LGPL-2.1-or-later
"""uniqd: Python bindings of libuniqd, the client library of /dev/uniqd.

    import uniqd

    with uniqd.Pool("build") as pool:
        ty = pool.cls("builtin.integer")
        h = pool.intern(ty, b"i32")          # equal in every attached process
        assert pool.lookup(ty, "i32") == h   # str is interned as UTF-8
        assert pool.resolve(h) == (ty, b"i32")
        for handle, cls, data in pool:       # every entry, in handle order
            ...

Errors are uniqd.Error (an OSError) with the errno and libuniqd's sentence
(uniqd_last_error()). See Documentation/python.rst.
"""
from ._uniqd import (
    LIBUNIQD_VERSION as LIBUNIQD_VERSION,
    AccessError as AccessError,
    Error as Error,
    ExistsError as ExistsError,
    LimitError as LimitError,
    NoDeviceError as NoDeviceError,
    NotFoundError as NotFoundError,
    Pool as Pool,
    RevokedError as RevokedError,
    device_info as device_info,
    errname as errname,
    version as version,
)

__all__ = [
    "LIBUNIQD_VERSION", "AccessError", "Error", "ExistsError", "LimitError",
    "NoDeviceError", "NotFoundError", "Pool", "RevokedError", "device_info",
    "errname", "version",
]
__version__ = LIBUNIQD_VERSION
