package io.cassandrajournal.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * Keeps a node's log when it matters. Where this fits: {@link SharedCassandra} calls it as the test JVM exits,
 * before the node's temporary directory (log included) is wiped.
 */
final class NodeLogs {

	private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

	private NodeLogs() {
	}

	/**
	 * @param died whether the node was started and is no longer running
	 * @param failures the failed tests of the JVM
	 * @return why the log is worth keeping, or {@code null} when it is not
	 */
	static @Nullable String reason(boolean died, List<String> failures) {
		if (!died && failures.isEmpty()) {
			return null;
		}
		StringBuilder reason = new StringBuilder();
		if (died) {
			reason.append("The shared node was no longer running when the test JVM exited (it died or was killed).\n");
		}
		if (!failures.isEmpty()) {
			reason.append("Failed in this test JVM (first ").append(failures.size()).append("):\n");
			failures.forEach((failure) -> reason.append("  ").append(failure).append('\n'));
		}
		return reason.toString();
	}

	/** @return the folder kept logs go to: {@code cassandra.test.node-logs}, else {@code target/cassandra-node-logs} */
	static Path destination() {
		String configured = System.getProperty("cassandra.test.node-logs");
		return (configured != null && !configured.isBlank()) ? Path.of(configured)
				: Path.of("target", "cassandra-node-logs");
	}

	/**
	 * Copies the files of {@code <nodeDirectory>/logs} into a new folder under {@code destination}, with a
	 * {@code reason.txt}.
	 * @param nodeDirectory the node's directory
	 * @param destination the folder to keep logs in (created if missing)
	 * @param reason why, written to {@code reason.txt}
	 * @return the new folder
	 */
	static Path keep(Path nodeDirectory, Path destination, String reason) {
		Path target = destination.resolve(ZonedDateTime.now(ZoneOffset.UTC).format(STAMP) + "-pid"
				+ ProcessHandle.current().pid());
		try {
			Files.createDirectories(target);
			Path logs = nodeDirectory.resolve("logs");
			if (Files.isDirectory(logs)) {
				try (Stream<Path> files = Files.list(logs)) {
					for (Path file : files.filter(Files::isRegularFile).toList()) {
						Files.copy(file, target.resolve(file.getFileName()));
					}
				}
			}
			Files.writeString(target.resolve("reason.txt"), reason + "Node directory: " + nodeDirectory + "\n",
					StandardCharsets.UTF_8);
			return target;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot copy the node's log to " + target, ex);
		}
	}

}
