package io.cassandrajournal.spring.boot.actuate;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

import io.cassandrajournal.projection.ResetInProgressException;

/**
 * The HTTP side of the {@code projections} endpoint's write operation: a reset refused because another reset of
 * the projection is still running ({@link ResetInProgressException}) is answered with 409 Conflict and a body
 * saying so, instead of 500. The operation itself is {@link ProjectionsEndpoint#control}'s: this extension only
 * chooses the status, so a bad request stays 400 (the endpoint's {@code InvalidEndpointRequestException}), an
 * unknown projection 404, and any other failure 500. JMX and the reads are the endpoint's, unchanged.
 */
@EndpointWebExtension(endpoint = ProjectionsEndpoint.class)
public class ProjectionsEndpointWebExtension {

	/** HTTP 409 Conflict, which {@link WebEndpointResponse} has no constant for. */
	static final int STATUS_CONFLICT = 409;

	private final ProjectionsEndpoint endpoint;

	public ProjectionsEndpointWebExtension(ProjectionsEndpoint endpoint) {
		this.endpoint = endpoint;
	}

	/**
	 * {@code POST /actuator/projections/{name}/{action}}: see {@link ProjectionsEndpoint}.
	 * @param name the projection
	 * @param action pause, resume, start, stop, reset, skip or redeliver
	 * @param fromTimestamp where a by-tag projection's reset continues
	 * @param fromSequenceNr where a by-persistenceId projection's reset continues
	 * @return the endpoint's answer (200), 404 for an unknown projection, or 409 with {@code error} and
	 * {@code message} for a reset refused because another reset runs
	 */
	@WriteOperation
	public WebEndpointResponse<Map<String, Object>> control(@Selector String name, @Selector String action,
			@Nullable Long fromTimestamp, @Nullable Long fromSequenceNr) {
		@Nullable Map<String, Object> body;
		try {
			body = this.endpoint.control(name, action, fromTimestamp, fromSequenceNr);
		}
		catch (ResetInProgressException ex) {
			return new WebEndpointResponse<>(refused(name, ex), STATUS_CONFLICT);
		}
		return (body != null) ? new WebEndpointResponse<>(body)
				: new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
	}

	private static Map<String, Object> refused(String name, ResetInProgressException ex) {
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("error", "reset in progress");
		body.put("message", "Reset of projection '" + name + "' refused: another reset of it is in progress and goes"
				+ " on; ask again when it has ended (" + ex.getMessage() + ")");
		return body;
	}

}
