package io.cassandrajournal.retention;

import java.time.Instant;

/**
 * One partition of the bucketed tag index: a tag's events of one time bucket.
 *
 * @param tag the tag
 * @param start the bucket's start (its events are stamped from here to start + bucket size)
 */
public record TagBucket(String tag, Instant start) {
}
