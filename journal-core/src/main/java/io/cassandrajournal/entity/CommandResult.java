package io.cassandrajournal.entity;

import java.util.List;

/**
 * What a command did.
 *
 * @param <S> the state type
 * @param <E> the event type
 * @param state the state after the command's events
 * @param events the events appended (empty if the command decided nothing)
 * @param attempts how many times the command ran (more than one after concurrency conflicts)
 */
public record CommandResult<S, E>(EntityState<S> state, List<E> events, int attempts) {

	public CommandResult {
		events = List.copyOf(events);
	}

}
