//! Fuzz target: arbitrary bytes as a Bolt request message (PackStream structure) and as a bare
//! PackStream value. Decoding may fail but never panic, recurse without bound or allocate
//! according to an unchecked length.
#![no_main]

use arbor_bolt::packstream::Decoder;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = arbor_bolt::message::parse_request(data);
    let mut dec = Decoder::new(data);
    while !dec.is_at_end() {
        if arbor_bolt::values::decode_value(&mut dec).is_err() {
            break;
        }
    }
});
