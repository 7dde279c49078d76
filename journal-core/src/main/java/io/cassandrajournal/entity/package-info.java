/**
 * Event-sourced entities: state folded from events, commands that emit events, a repository that retries on conflict.
 */
@NullMarked
package io.cassandrajournal.entity;

import org.jspecify.annotations.NullMarked;
