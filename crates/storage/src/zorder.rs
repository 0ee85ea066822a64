//! Z-order (Morton) codes of point coordinates: the order-preserving integer image of a
//! coordinate's bits and the interleaving that orders point keys (srid, Morton code, then the
//! coordinates). The leaf both the index keys (`value.rs`) and the POINT index's box searches
//! (`point_index.rs`) build on.

/// The order-preserving integer image of a coordinate's bits (negative floats reversed).
pub(crate) fn ordered(bits: u64) -> u64 {
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// The inverse of [`ordered`].
pub(crate) fn unordered(o: u64) -> u64 {
    if o >> 63 == 1 {
        o & !(1 << 63)
    } else {
        !o
    }
}

/// Spreads the low 32 bits of `v` to the even bits of a u64.
fn spread2(v: u64) -> u64 {
    let mut x = v & 0xffff_ffff;
    x = (x | x << 16) & 0x0000_ffff_0000_ffff;
    x = (x | x << 8) & 0x00ff_00ff_00ff_00ff;
    x = (x | x << 4) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | x << 2) & 0x3333_3333_3333_3333;
    (x | x << 1) & 0x5555_5555_5555_5555
}

/// Spreads the low 21 bits of `v` to every third bit of a u64.
fn spread3(v: u64) -> u64 {
    let mut x = v & 0x1f_ffff;
    x = (x | x << 32) & 0x001f_0000_0000_ffff;
    x = (x | x << 16) & 0x001f_0000_ff00_00ff;
    x = (x | x << 8) & 0x100f_00f0_0f00_f00f;
    x = (x | x << 4) & 0x10c3_0c30_c30c_30c3;
    (x | x << 2) & 0x1249_2492_4924_9249
}

/// The Morton code of coordinates given as stored bits (x in the highest interleaved bit).
pub(crate) fn morton(x: u64, y: u64, z: Option<u64>) -> u64 {
    match z {
        None => spread2(ordered(x) >> 32) << 1 | spread2(ordered(y) >> 32),
        Some(z) => {
            spread3(ordered(x) >> 43) << 2
                | spread3(ordered(y) >> 43) << 1
                | spread3(ordered(z) >> 43)
        }
    }
}

/// The order of two point keys' parts: srid, Morton code, then the ordered coordinates.
pub(crate) fn cmp_points(
    a: (u32, u64, u64, Option<u64>),
    b: (u32, u64, u64, Option<u64>),
) -> std::cmp::Ordering {
    let key = |p: (u32, u64, u64, Option<u64>)| {
        (p.0, morton(p.1, p.2, p.3), ordered(p.1), ordered(p.2), p.3.map(ordered))
    };
    key(a).cmp(&key(b))
}
