//! Spatial points: construction from Cypher maps, distance, and component accessors.

use crate::error::{Error, Result};
use crate::temporal::Point;
use crate::value::{PropertyMap, Value};

pub const SRID_CARTESIAN: u32 = 7203;
pub const SRID_CARTESIAN_3D: u32 = 9157;
pub const SRID_WGS84: u32 = 4326;
pub const SRID_WGS84_3D: u32 = 4979;

/// Mean Earth radius in metres, as Neo4j uses for WGS-84 distances.
const EARTH_RADIUS_M: f64 = 6_378_140.0;

/// The CRS name Neo4j reports for a SRID.
pub fn crs_name(srid: u32) -> &'static str {
    match srid {
        SRID_CARTESIAN => "cartesian",
        SRID_CARTESIAN_3D => "cartesian-3d",
        SRID_WGS84 => "wgs-84",
        SRID_WGS84_3D => "wgs-84-3d",
        _ => "unknown",
    }
}

fn srid_for_crs(name: &str) -> Option<u32> {
    match name.to_ascii_lowercase().as_str() {
        "cartesian" => Some(SRID_CARTESIAN),
        "cartesian-3d" => Some(SRID_CARTESIAN_3D),
        "wgs-84" => Some(SRID_WGS84),
        "wgs-84-3d" => Some(SRID_WGS84_3D),
        _ => None,
    }
}

fn bad(msg: impl Into<String>) -> Error {
    Error::argument(msg).with_detail("InvalidArgumentValue")
}

fn coord(map: &PropertyMap, key: &str) -> Result<Option<f64>> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Int(i)) => Ok(Some(*i as f64)),
        Some(Value::Float(f)) => Ok(Some(*f)),
        Some(other) => Err(Error::type_error(format!(
            "Point coordinate `{key}` must be a number, got {}",
            other.type_name()
        ))
        .with_detail("InvalidArgumentType")),
    }
}

/// `point({x, y[, z]})`, `point({latitude, longitude[, height]})`, optionally with `crs` or
/// `srid`. Returns `Ok(None)` when a coordinate is null (Neo4j returns null then).
pub fn point_from_map(map: &PropertyMap) -> Result<Option<Point>> {
    if map.values().any(Value::is_null) {
        return Ok(None);
    }
    let explicit_srid = match (map.get("crs"), map.get("srid")) {
        (Some(Value::String(s)), _) => Some(
            srid_for_crs(s)
                .ok_or_else(|| bad(format!("Unknown coordinate reference system: {s}")))?,
        ),
        (_, Some(Value::Int(i))) => {
            let s = u32::try_from(*i).ok().filter(|s| crs_name(*s) != "unknown");
            Some(s.ok_or_else(|| bad(format!("Unknown SRID: {i}")))?)
        }
        (None, None) => None,
        _ => return Err(bad("`crs` must be a string and `srid` an integer")),
    };
    let (x, y, z, geographic) = if map.contains_key("x") || map.contains_key("y") {
        (coord(map, "x")?, coord(map, "y")?, coord(map, "z")?, false)
    } else if map.contains_key("latitude") || map.contains_key("longitude") {
        (coord(map, "longitude")?, coord(map, "latitude")?, coord(map, "height")?, true)
    } else {
        return Err(bad("A point must have either x and y or latitude and longitude"));
    };
    let (Some(x), Some(y)) = (x, y) else {
        return Err(bad("A point must have either x and y or latitude and longitude"));
    };
    let srid = explicit_srid.unwrap_or(match (geographic, z.is_some()) {
        (false, false) => SRID_CARTESIAN,
        (false, true) => SRID_CARTESIAN_3D,
        (true, false) => SRID_WGS84,
        (true, true) => SRID_WGS84_3D,
    });
    let is_3d = matches!(srid, SRID_CARTESIAN_3D | SRID_WGS84_3D);
    if is_3d != z.is_some() {
        return Err(bad(
            "The coordinate reference system does not match the number of coordinates",
        ));
    }
    // Neo4j accepts `x`/`y` in a geographic CRS (x is the longitude), but not latitude and
    // longitude in a cartesian one.
    let wgs84 = matches!(srid, SRID_WGS84 | SRID_WGS84_3D);
    if geographic && !wgs84 {
        return Err(bad(format!(
            "Geographic points does not support coordinate reference system: {}.\
             This is set either in the csv header or the actual data column",
            crs_name(srid)
        )));
    }
    if wgs84 && !(-90.0..=90.0).contains(&y) {
        let coords = match z {
            Some(z) => format!("[{x:?}, {y:?}, {z:?}]"),
            None => format!("[{x:?}, {y:?}]"),
        };
        return Err(bad(format!(
            "Cannot create WGS84 point with invalid coordinate: {coords}. \
             Valid range for Y coordinate is [-90, 90]."
        )));
    }
    Ok(Some(Point { srid, x, y, z }))
}

/// Distance between two points of the same CRS: Euclidean for cartesian, haversine (with height
/// difference for 3D) for WGS-84. `None` when the CRSs differ.
pub fn distance(a: &Point, b: &Point) -> Option<f64> {
    if a.srid != b.srid {
        return None;
    }
    match a.srid {
        SRID_WGS84 | SRID_WGS84_3D => {
            let (lat1, lat2) = (a.y.to_radians(), b.y.to_radians());
            let dlat = lat2 - lat1;
            let dlon = (b.x - a.x).to_radians();
            let h =
                (dlat / 2.0).sin().powi(2) + lat1.cos() * lat2.cos() * (dlon / 2.0).sin().powi(2);
            let ground = 2.0 * EARTH_RADIUS_M * h.sqrt().atan2((1.0 - h).sqrt());
            match (a.z, b.z) {
                (Some(z1), Some(z2)) => Some((ground * ground + (z2 - z1).powi(2)).sqrt()),
                _ => Some(ground),
            }
        }
        _ => {
            let dz = match (a.z, b.z) {
                (Some(z1), Some(z2)) => z2 - z1,
                _ => 0.0,
            };
            Some(((b.x - a.x).powi(2) + (b.y - a.y).powi(2) + dz * dz).sqrt())
        }
    }
}

/// Point accessors: `x`, `y`, `z`, `latitude`, `longitude`, `height`, `srid`, `crs`.
pub fn point_component(p: &Point, name: &str) -> Option<Value> {
    let geographic = matches!(p.srid, SRID_WGS84 | SRID_WGS84_3D);
    Some(match name {
        "x" => Value::Float(p.x),
        "y" => Value::Float(p.y),
        "z" => Value::Float(p.z?),
        "longitude" if geographic => Value::Float(p.x),
        "latitude" if geographic => Value::Float(p.y),
        "height" if geographic => Value::Float(p.z?),
        "srid" => Value::Int(i64::from(p.srid)),
        "crs" => Value::str(crs_name(p.srid)),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(kv: &[(&str, Value)]) -> PropertyMap {
        kv.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    #[test]
    fn points() {
        let p = point_from_map(&map(&[("x", Value::Int(3)), ("y", Value::Float(4.0))]))
            .unwrap()
            .unwrap();
        assert_eq!(p.srid, SRID_CARTESIAN);
        let o =
            point_from_map(&map(&[("x", Value::Int(0)), ("y", Value::Int(0))])).unwrap().unwrap();
        assert_eq!(distance(&p, &o), Some(5.0));
        let g = point_from_map(&map(&[
            ("latitude", Value::Float(56.7)),
            ("longitude", Value::Float(12.78)),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(g.srid, SRID_WGS84);
        assert!(matches!(point_component(&g, "latitude"), Some(Value::Float(f)) if f == 56.7));
        assert_eq!(distance(&g, &p), None);
        assert!(point_from_map(&map(&[("x", Value::Null), ("y", Value::Int(1))]))
            .unwrap()
            .is_none());
        assert!(point_from_map(&map(&[("a", Value::Int(1))])).is_err());
        assert!(point_from_map(&map(&[("x", Value::str("a")), ("y", Value::Int(1))])).is_err());
    }
}
