package io.cassandrajournal.launcher.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import io.cassandrajournal.launcher.CassandraLaunchException;

/**
 * Picks the JVM that runs Cassandra. Cassandra 5.0 runs on JDK 11 or 17 only: {@code CASSANDRA_JAVA_HOME}
 * (environment or system property {@code cassandra.java.home}) wins, then the running JDK when it is 11 or
 * 17, then a JDK 17 or 11 installed beside the running one.
 */
public final class JavaRuntime {

	private static final List<String> SUPPORTED = List.of("17", "11");

	private JavaRuntime() {
	}

	public static Path resolveJavaExecutable() {
		String configured = Optional.ofNullable(System.getProperty("cassandra.java.home"))
			.orElse(System.getenv("CASSANDRA_JAVA_HOME"));
		if (configured != null && !configured.isBlank()) {
			Path java = Path.of(configured, "bin", "java");
			if (!Files.isExecutable(java)) {
				throw new CassandraLaunchException("CASSANDRA_JAVA_HOME is '" + configured
						+ "' but it has no executable bin/java; point it at a JDK 11 or 17.");
			}
			return java;
		}
		Path running = Path.of(System.getProperty("java.home"));
		if (SUPPORTED.contains(String.valueOf(Runtime.version().feature()))) {
			return running.resolve("bin").resolve("java");
		}
		return findSibling(running).orElseThrow(() -> new CassandraLaunchException(
				"Cassandra 5.0 needs JDK 11 or 17 but this JVM is " + Runtime.version().feature()
						+ " and no JDK 11 or 17 was found beside " + running
						+ "; set CASSANDRA_JAVA_HOME to a JDK 11 or 17."));
	}

	private static Optional<Path> findSibling(Path running) {
		Path parent = running.getParent();
		if (parent == null) {
			return Optional.empty();
		}
		try (Stream<Path> candidates = Files.list(parent)) {
			return candidates.filter((home) -> Files.isExecutable(home.resolve("bin").resolve("java")))
				.filter((home) -> SUPPORTED.contains(majorVersion(home)))
				.sorted()
				.map((home) -> home.resolve("bin").resolve("java"))
				.findFirst();
		}
		catch (IOException ex) {
			return Optional.empty();
		}
	}

	private static String majorVersion(Path home) {
		Path release = home.resolve("release");
		if (!Files.isRegularFile(release)) {
			return "";
		}
		try {
			for (String line : Files.readAllLines(release)) {
				if (line.startsWith("JAVA_VERSION=")) {
					String version = line.substring("JAVA_VERSION=".length()).replace("\"", "");
					int dot = version.indexOf('.');
					return (dot > 0) ? version.substring(0, dot) : version;
				}
			}
		}
		catch (IOException ex) {
			// unreadable: not a candidate
		}
		return "";
	}

}
