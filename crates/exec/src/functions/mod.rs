//! The Cypher function library: scalar functions that need no graph access, and aggregations.
//!
//! Graph-dependent functions (`id`, `labels`, `type`, `properties` of entities, `startNode`,
//! `nodes`, ...) are evaluated by the expression evaluator, which has the graph at hand.
//!
//! Scalar functions receive already evaluated arguments. A missing argument reads as null, so a
//! function never panics on a short argument list; callers check arity with [`scalar_arity`].

mod agg;
mod apoc;
mod args;
mod coll;
mod convert;
mod scalar;
mod temporal;
mod vector;

use arbor_model::{Error, Result, Value};

pub use agg::new_accumulator;
use args::{arg, describe, type_err, value_err};

/// A scalar function over evaluated arguments.
pub type ScalarFn = fn(&[Value]) -> Result<Value>;

/// One registry entry: lower-case name, implementation, minimum and maximum argument count.
struct Entry {
    name: &'static str,
    func: ScalarFn,
    min_args: usize,
    max_args: usize,
}

const fn e(name: &'static str, func: ScalarFn, min_args: usize, max_args: usize) -> Entry {
    Entry { name, func, min_args, max_args }
}

/// Every scalar function, by lower-case name.
static SCALARS: &[Entry] = &[
    // Strings.
    e("toupper", scalar::to_upper, 1, 1),
    e("upper", scalar::to_upper, 1, 1),
    e("tolower", scalar::to_lower, 1, 1),
    e("lower", scalar::to_lower, 1, 1),
    e("trim", scalar::trim, 1, 1),
    e("ltrim", scalar::ltrim, 1, 2),
    e("rtrim", scalar::rtrim, 1, 2),
    e("btrim", scalar::btrim, 1, 2),
    e("replace", scalar::replace, 3, 3),
    e("substring", scalar::substring, 2, 3),
    e("left", scalar::left, 2, 2),
    e("right", scalar::right, 2, 2),
    e("split", scalar::split, 2, 2),
    e("reverse", scalar::reverse, 1, 1),
    e("size", scalar::size, 1, 1),
    e("char_length", scalar::char_length, 1, 1),
    e("character_length", scalar::char_length, 1, 1),
    // Conversion.
    e("tostring", convert::to_string, 1, 1),
    e("tostringornull", convert::to_string_or_null, 1, 1),
    e("tointeger", convert::to_integer, 1, 1),
    e("tointegerornull", convert::to_integer_or_null, 1, 1),
    e("tofloat", convert::to_float, 1, 1),
    e("tofloatornull", convert::to_float_or_null, 1, 1),
    e("toboolean", convert::to_boolean, 1, 1),
    e("tobooleanornull", convert::to_boolean_or_null, 1, 1),
    e("tointegerlist", convert::to_integer_list, 1, 1),
    e("tofloatlist", convert::to_float_list, 1, 1),
    e("tobooleanlist", convert::to_boolean_list, 1, 1),
    e("tostringlist", convert::to_string_list, 1, 1),
    // Math.
    e("abs", scalar::abs, 1, 1),
    e("ceil", scalar::ceil, 1, 1),
    e("floor", scalar::floor, 1, 1),
    e("round", scalar::round, 1, 3),
    e("sign", scalar::sign, 1, 1),
    e("sqrt", scalar::sqrt, 1, 1),
    e("exp", scalar::exp, 1, 1),
    e("log", scalar::log, 1, 1),
    e("log10", scalar::log10, 1, 1),
    e("rand", scalar::rand, 0, 0),
    e("e", scalar::e, 0, 0),
    e("pi", scalar::pi, 0, 0),
    e("sin", scalar::sin, 1, 1),
    e("cos", scalar::cos, 1, 1),
    e("tan", scalar::tan, 1, 1),
    e("cot", scalar::cot, 1, 1),
    e("asin", scalar::asin, 1, 1),
    e("acos", scalar::acos, 1, 1),
    e("atan", scalar::atan, 1, 1),
    e("atan2", scalar::atan2, 2, 2),
    e("sinh", scalar::sinh, 1, 1),
    e("cosh", scalar::cosh, 1, 1),
    e("tanh", scalar::tanh, 1, 1),
    e("coth", scalar::coth, 1, 1),
    e("degrees", scalar::degrees, 1, 1),
    e("radians", scalar::radians, 1, 1),
    e("haversin", scalar::haversin, 1, 1),
    e("isnan", scalar::is_nan, 1, 1),
    // Lists, maps and misc.
    e("head", scalar::head, 1, 1),
    e("last", scalar::last, 1, 1),
    e("tail", scalar::tail, 1, 1),
    e("range", scalar::range, 2, 3),
    e("coalesce", scalar::coalesce, 1, usize::MAX),
    e("isempty", scalar::is_empty, 1, 1),
    e("keys", scalar::keys, 1, 1),
    e("valuetype", scalar::value_type, 1, 1),
    e("timestamp", scalar::timestamp, 0, 0),
    e("randomuuid", scalar::random_uuid, 0, 0),
    e("nullif", scalar::null_if, 2, 2),
    // Spatial.
    e("point", scalar::point, 1, 1),
    e("distance", scalar::distance, 2, 2),
    e("point.distance", scalar::distance, 2, 2),
    e("point.withinbbox", scalar::within_bbox, 3, 3),
    // APOC (apoc.any.property/properties are bound by the planner).
    e("apoc.coll.sort", apoc::coll_sort, 1, 1),
    e("apoc.coll.toset", apoc::coll_to_set, 1, 1),
    e("apoc.coll.flatten", apoc::coll_flatten, 1, 2),
    e("apoc.coll.contains", apoc::coll_contains, 2, 2),
    e("apoc.coll.sum", apoc::coll_sum, 1, 1),
    e("apoc.coll.min", apoc::coll_min, 1, 1),
    e("apoc.coll.max", apoc::coll_max, 1, 1),
    e("apoc.coll.union", apoc::coll_union, 2, 2),
    e("apoc.coll.intersection", apoc::coll_intersection, 2, 2),
    e("apoc.coll.subtract", apoc::coll_subtract, 2, 2),
    e("apoc.map.clean", apoc::map_clean, 3, 3),
    e("apoc.map.merge", apoc::map_merge, 2, 2),
    e("apoc.map.frompairs", apoc::map_from_pairs, 1, 1),
    e("apoc.text.join", apoc::text_join, 2, 2),
    e("apoc.meta.cypher.type", apoc::meta_cypher_type, 1, 1),
    e("apoc.meta.cypher.types", apoc::meta_cypher_types, 1, 1),
    // Cypher 25 collection functions.
    e("coll.distinct", coll::distinct, 1, 1),
    e("coll.flatten", coll::flatten, 1, 2),
    e("coll.indexof", coll::index_of, 2, 2),
    e("coll.insert", coll::insert, 3, 3),
    e("coll.max", coll::max, 1, 1),
    e("coll.min", coll::min, 1, 1),
    e("coll.remove", coll::remove, 2, 2),
    e("coll.sort", coll::sort, 1, 1),
    e("apoc.text.clean", apoc::text::clean, 1, 1),
    e("apoc.text.replace", apoc::text::replace, 3, 3),
    e("apoc.text.regreplace", apoc::text::replace, 3, 3),
    e("apoc.text.split", apoc::text::split, 2, 3),
    e("apoc.text.regexgroups", apoc::text::regex_groups, 2, 2),
    e("apoc.text.capitalize", apoc::text::capitalize, 1, 1),
    e("apoc.text.capitalizeall", apoc::text::capitalize_all, 1, 1),
    e("apoc.text.camelcase", apoc::text::camel_case, 1, 1),
    e("apoc.text.uppercamelcase", apoc::text::upper_camel_case, 1, 1),
    e("apoc.text.snakecase", apoc::text::snake_case, 1, 1),
    e("apoc.text.distance", apoc::text::levenshtein_distance, 2, 2),
    e("apoc.text.levenshteindistance", apoc::text::levenshtein_distance, 2, 2),
    e("apoc.text.levenshteinsimilarity", apoc::text::levenshtein_similarity, 2, 2),
    e("apoc.text.fuzzymatch", apoc::text::fuzzy_match, 2, 2),
    e("apoc.text.hammingdistance", apoc::text::hamming_distance, 2, 2),
    e("apoc.text.lpad", apoc::text::lpad, 2, 3),
    e("apoc.text.rpad", apoc::text::rpad, 2, 3),
    e("apoc.text.indexof", apoc::text::index_of, 2, 3),
    e("apoc.convert.tojson", apoc::convert::to_json_text, 1, 1),
    e("apoc.convert.fromjsonmap", apoc::convert::from_json_map, 1, 2),
    e("apoc.convert.fromjsonlist", apoc::convert::from_json_list, 1, 2),
    e("apoc.map.setkey", apoc::convert::map_set_key, 3, 3),
    e("apoc.map.removekey", apoc::convert::map_remove_keys, 2, 3),
    e("apoc.map.removekeys", apoc::convert::map_remove_keys, 2, 3),
    e("apoc.map.fromlists", apoc::convert::map_from_lists, 2, 2),
    e("apoc.map.values", apoc::convert::map_values, 2, 3),
    e("apoc.map.submap", apoc::convert::map_submap, 2, 4),
    e("apoc.map.mergelist", apoc::convert::map_merge_list, 1, 1),
    e("apoc.util.md5", apoc::convert::md5, 1, 1),
    e("apoc.util.sha1", apoc::convert::sha1, 1, 1),
    e("apoc.util.sha256", apoc::convert::sha256, 1, 1),
    e("apoc.date.format", apoc::date::format, 1, 4),
    e("apoc.date.parse", apoc::date::parse, 1, 4),
    e("apoc.date.currenttimestamp", apoc::date::current_timestamp, 0, 0),
    e("apoc.date.convert", apoc::date::convert, 3, 3),
    e("apoc.date.add", apoc::date::add, 4, 4),
    e("apoc.date.toiso8601", apoc::date::to_iso8601, 1, 2),
    e("apoc.date.fromiso8601", apoc::date::from_iso8601, 1, 1),
    e("apoc.create.uuid", apoc::create_uuid, 0, 0),
    e("gds.util.asnode", apoc::gds_as_node, 1, 1),
    e("gds.util.asnodes", apoc::gds_as_node, 1, 1),
    // Vectors.
    e("vector.similarity.cosine", vector::cosine, 2, 2),
    e("vector.similarity.euclidean", vector::euclidean, 2, 2),
    // Temporal.
    e("date", temporal::date, 0, 1),
    e("date.transaction", temporal::date, 0, 1),
    e("date.statement", temporal::date, 0, 1),
    e("date.realtime", temporal::date, 0, 1),
    e("date.truncate", temporal::date_truncate, 2, 3),
    e("localtime", temporal::localtime, 0, 1),
    e("localtime.transaction", temporal::localtime, 0, 1),
    e("localtime.statement", temporal::localtime, 0, 1),
    e("localtime.realtime", temporal::localtime, 0, 1),
    e("localtime.truncate", temporal::localtime_truncate, 2, 3),
    e("time", temporal::time, 0, 1),
    e("time.transaction", temporal::time, 0, 1),
    e("time.statement", temporal::time, 0, 1),
    e("time.realtime", temporal::time, 0, 1),
    e("time.truncate", temporal::time_truncate, 2, 3),
    e("localdatetime", temporal::localdatetime, 0, 1),
    e("localdatetime.transaction", temporal::localdatetime, 0, 1),
    e("localdatetime.statement", temporal::localdatetime, 0, 1),
    e("localdatetime.realtime", temporal::localdatetime, 0, 1),
    e("localdatetime.truncate", temporal::localdatetime_truncate, 2, 3),
    e("datetime", temporal::datetime, 0, 1),
    e("datetime.transaction", temporal::datetime, 0, 1),
    e("datetime.statement", temporal::datetime, 0, 1),
    e("datetime.realtime", temporal::datetime, 0, 1),
    e("datetime.truncate", temporal::datetime_truncate, 2, 3),
    e("datetime.fromepoch", temporal::datetime_from_epoch, 2, 2),
    e("datetime.fromepochmillis", temporal::datetime_from_epoch_millis, 1, 1),
    e("duration", temporal::duration, 1, 1),
    e("duration.between", temporal::duration_between, 2, 2),
    e("duration.inmonths", temporal::duration_in_months, 2, 2),
    e("duration.indays", temporal::duration_in_days, 2, 2),
    e("duration.inseconds", temporal::duration_in_seconds, 2, 2),
];

/// Every function `SHOW FUNCTIONS` lists: `(name as Neo4j spells it, category)`, scalar
/// library functions, graph functions the evaluator implements, and aggregations.
pub static CATALOG: &[(&str, &str)] = &[
    ("toUpper", "String"),
    ("upper", "String"),
    ("toLower", "String"),
    ("lower", "String"),
    ("trim", "String"),
    ("ltrim", "String"),
    ("rtrim", "String"),
    ("btrim", "String"),
    ("replace", "String"),
    ("substring", "String"),
    ("left", "String"),
    ("right", "String"),
    ("split", "String"),
    ("reverse", "String"),
    ("size", "String"),
    ("char_length", "String"),
    ("character_length", "String"),
    ("toString", "Scalar"),
    ("toStringOrNull", "Scalar"),
    ("toInteger", "Scalar"),
    ("toIntegerOrNull", "Scalar"),
    ("toFloat", "Scalar"),
    ("toFloatOrNull", "Scalar"),
    ("toBoolean", "Scalar"),
    ("toBooleanOrNull", "Scalar"),
    ("toIntegerList", "Scalar"),
    ("toFloatList", "Scalar"),
    ("toBooleanList", "Scalar"),
    ("toStringList", "Scalar"),
    ("abs", "Numeric"),
    ("ceil", "Numeric"),
    ("floor", "Numeric"),
    ("round", "Numeric"),
    ("sign", "Numeric"),
    ("sqrt", "Numeric"),
    ("exp", "Numeric"),
    ("log", "Numeric"),
    ("log10", "Numeric"),
    ("rand", "Numeric"),
    ("e", "Numeric"),
    ("pi", "Numeric"),
    ("sin", "Numeric"),
    ("cos", "Numeric"),
    ("tan", "Numeric"),
    ("cot", "Numeric"),
    ("asin", "Numeric"),
    ("acos", "Numeric"),
    ("atan", "Numeric"),
    ("atan2", "Numeric"),
    ("sinh", "Numeric"),
    ("cosh", "Numeric"),
    ("tanh", "Numeric"),
    ("coth", "Numeric"),
    ("degrees", "Numeric"),
    ("radians", "Numeric"),
    ("haversin", "Numeric"),
    ("isNaN", "Numeric"),
    ("head", "List"),
    ("last", "List"),
    ("tail", "List"),
    ("range", "List"),
    ("coalesce", "List"),
    ("isEmpty", "List"),
    ("keys", "List"),
    ("valueType", "List"),
    ("timestamp", "List"),
    ("randomUUID", "List"),
    ("nullIf", "List"),
    ("point", "Spatial"),
    ("distance", "Spatial"),
    ("point.distance", "Spatial"),
    ("point.withinBBox", "Spatial"),
    ("apoc.coll.sort", "APOC"),
    ("apoc.coll.toSet", "APOC"),
    ("apoc.coll.flatten", "APOC"),
    ("apoc.coll.contains", "APOC"),
    ("apoc.coll.sum", "APOC"),
    ("apoc.coll.min", "APOC"),
    ("apoc.coll.max", "APOC"),
    ("apoc.coll.union", "APOC"),
    ("apoc.coll.intersection", "APOC"),
    ("apoc.coll.subtract", "APOC"),
    ("apoc.map.clean", "APOC"),
    ("apoc.map.merge", "APOC"),
    ("apoc.map.fromPairs", "APOC"),
    ("apoc.text.join", "APOC"),
    ("apoc.meta.cypher.type", "APOC"),
    ("apoc.meta.cypher.types", "APOC"),
    ("coll.distinct", "List"),
    ("coll.flatten", "List"),
    ("coll.indexOf", "List"),
    ("coll.insert", "List"),
    ("coll.max", "List"),
    ("coll.min", "List"),
    ("coll.remove", "List"),
    ("coll.sort", "List"),
    ("apoc.text.clean", "APOC"),
    ("apoc.text.replace", "APOC"),
    ("apoc.text.regreplace", "APOC"),
    ("apoc.text.split", "APOC"),
    ("apoc.text.regexGroups", "APOC"),
    ("apoc.text.capitalize", "APOC"),
    ("apoc.text.capitalizeAll", "APOC"),
    ("apoc.text.camelCase", "APOC"),
    ("apoc.text.upperCamelCase", "APOC"),
    ("apoc.text.snakeCase", "APOC"),
    ("apoc.text.distance", "APOC"),
    ("apoc.text.levenshteinDistance", "APOC"),
    ("apoc.text.levenshteinSimilarity", "APOC"),
    ("apoc.text.fuzzyMatch", "APOC"),
    ("apoc.text.hammingDistance", "APOC"),
    ("apoc.text.lpad", "APOC"),
    ("apoc.text.rpad", "APOC"),
    ("apoc.text.indexOf", "APOC"),
    ("apoc.convert.toJson", "APOC"),
    ("apoc.convert.fromJsonMap", "APOC"),
    ("apoc.convert.fromJsonList", "APOC"),
    ("apoc.map.setKey", "APOC"),
    ("apoc.map.removeKey", "APOC"),
    ("apoc.map.removeKeys", "APOC"),
    ("apoc.map.fromLists", "APOC"),
    ("apoc.map.values", "APOC"),
    ("apoc.map.submap", "APOC"),
    ("apoc.map.mergeList", "APOC"),
    ("apoc.util.md5", "APOC"),
    ("apoc.util.sha1", "APOC"),
    ("apoc.util.sha256", "APOC"),
    ("apoc.date.format", "APOC"),
    ("apoc.date.parse", "APOC"),
    ("apoc.date.currentTimestamp", "APOC"),
    ("apoc.date.convert", "APOC"),
    ("apoc.date.add", "APOC"),
    ("apoc.date.toISO8601", "APOC"),
    ("apoc.date.fromISO8601", "APOC"),
    ("apoc.create.uuid", "APOC"),
    ("gds.util.asNode", "GDS"),
    ("gds.util.asNodes", "GDS"),
    ("vector.similarity.cosine", "Vector"),
    ("vector.similarity.euclidean", "Vector"),
    ("date", "Temporal"),
    ("date.transaction", "Temporal"),
    ("date.statement", "Temporal"),
    ("date.realtime", "Temporal"),
    ("date.truncate", "Temporal"),
    ("localtime", "Temporal"),
    ("localtime.transaction", "Temporal"),
    ("localtime.statement", "Temporal"),
    ("localtime.realtime", "Temporal"),
    ("localtime.truncate", "Temporal"),
    ("time", "Temporal"),
    ("time.transaction", "Temporal"),
    ("time.statement", "Temporal"),
    ("time.realtime", "Temporal"),
    ("time.truncate", "Temporal"),
    ("localdatetime", "Temporal"),
    ("localdatetime.transaction", "Temporal"),
    ("localdatetime.statement", "Temporal"),
    ("localdatetime.realtime", "Temporal"),
    ("localdatetime.truncate", "Temporal"),
    ("datetime", "Temporal"),
    ("datetime.transaction", "Temporal"),
    ("datetime.statement", "Temporal"),
    ("datetime.realtime", "Temporal"),
    ("datetime.truncate", "Temporal"),
    ("datetime.fromEpoch", "Temporal"),
    ("datetime.fromEpochMillis", "Temporal"),
    ("duration", "Temporal"),
    ("duration.between", "Temporal"),
    ("duration.inMonths", "Temporal"),
    ("duration.inDays", "Temporal"),
    ("duration.inSeconds", "Temporal"),
    ("id", "Scalar"),
    ("elementId", "Scalar"),
    ("labels", "List"),
    ("type", "Scalar"),
    ("properties", "Scalar"),
    ("startNode", "Scalar"),
    ("endNode", "Scalar"),
    ("nodes", "List"),
    ("relationships", "List"),
    ("length", "Scalar"),
    ("exists", "Predicate"),
    ("count", "Aggregating"),
    ("sum", "Aggregating"),
    ("avg", "Aggregating"),
    ("min", "Aggregating"),
    ("max", "Aggregating"),
    ("collect", "Aggregating"),
    ("stDev", "Aggregating"),
    ("stDevP", "Aggregating"),
    ("percentileCont", "Aggregating"),
    ("percentileDisc", "Aggregating"),
];

fn find(name: &str) -> Option<&'static Entry> {
    SCALARS.iter().find(|e| e.name.eq_ignore_ascii_case(name))
}

/// Looks up a scalar function by name, case-insensitively (`toUpper`, `toupper`), including
/// namespaced ones (`date.truncate`).
pub fn lookup_scalar(name: &str) -> Option<ScalarFn> {
    find(name).map(|e| e.func)
}

/// The accepted argument counts of a scalar function, `(min, max)`; `max` is `usize::MAX` for
/// variadic functions (`coalesce`). `None` when the function does not exist.
pub fn scalar_arity(name: &str) -> Option<(usize, usize)> {
    find(name).map(|e| (e.min_args, e.max_args))
}

/// Whether a scalar function may return different results for the same arguments (`rand()`,
/// `randomUUID()`, `timestamp()`, the current-time temporal constructors), so it must not be
/// constant-folded or cached.
pub fn is_nondeterministic(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    matches!(n.as_str(), "rand" | "randomuuid" | "timestamp")
        || n.ends_with(".transaction")
        || n.ends_with(".statement")
        || n.ends_with(".realtime")
        || matches!(n.as_str(), "date" | "localtime" | "time" | "localdatetime" | "datetime")
}

/// Aggregation functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggKind {
    Count,
    Sum,
    Avg,
    Min,
    Max,
    Collect,
    StDev,
    StDevP,
    PercentileCont,
    PercentileDisc,
}

/// Looks up an aggregation function by name, case-insensitively.
pub fn lookup_aggregate(name: &str) -> Option<AggKind> {
    Some(match name.to_ascii_lowercase().as_str() {
        "count" => AggKind::Count,
        "sum" => AggKind::Sum,
        "avg" => AggKind::Avg,
        "min" => AggKind::Min,
        "max" => AggKind::Max,
        "collect" => AggKind::Collect,
        "stdev" => AggKind::StDev,
        "stdevp" => AggKind::StDevP,
        "percentilecont" => AggKind::PercentileCont,
        "percentiledisc" => AggKind::PercentileDisc,
        _ => return None,
    })
}

/// Accumulates one group's values. For `percentileCont`/`percentileDisc` the second argument
/// (the percentile) arrives with every row.
pub trait Accumulator: Send {
    fn update(&mut self, args: &[Value]) -> Result<()>;
    fn finish(&mut self) -> Result<Value>;
    /// Feeds the single arguments of several rows, in order, exactly as one `update` per
    /// value would; on an error, the index in `vals` of the row that failed (the accumulator
    /// is then not used any more). The common aggregates override it with a tight loop.
    fn update_many(&mut self, vals: &[Value]) -> std::result::Result<(), (usize, Error)> {
        for (i, v) in vals.iter().enumerate() {
            self.update(std::slice::from_ref(v)).map_err(|e| (i, e))?;
        }
        Ok(())
    }
    /// Adds a batch of integer arguments, summarised in `p`, exactly as one `update` per
    /// value would (in any order of the values); `false`, with nothing changed, where this
    /// accumulator cannot (the caller then feeds the values one by one).
    fn merge_ints(&mut self, p: &IntPartial) -> bool {
        let _ = p;
        false
    }
}

/// A batch of integer aggregate arguments (nulls left out) for [`Accumulator::merge_ints`]:
/// how many, their exact sum, the smallest and the largest.
#[derive(Clone, Copy, Debug)]
pub struct IntPartial {
    pub count: i64,
    pub sum: i128,
    pub min: i64,
    pub max: i64,
}

impl Default for IntPartial {
    fn default() -> IntPartial {
        IntPartial { count: 0, sum: 0, min: i64::MAX, max: i64::MIN }
    }
}

impl IntPartial {
    #[inline(always)]
    pub fn add(&mut self, v: i64) {
        self.count += 1;
        self.sum += i128::from(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }
}

// ---------------------------------------------------------------------------------------------
// Argument helpers shared by the function modules.
// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests;

#[cfg(test)]
mod tck_tests;
