package io.cassandrajournal.launcher.internal;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.stream.Stream;

/**
 * Creates, wipes and sweeps node directories. Temporary nodes live under
 * {@code ${java.io.tmpdir}/cassandra-launcher/}; each holds an {@code owner.pid} with the child's pid so a
 * later start can remove directories whose node is gone (for example after a machine reset).
 */
public final class NodeDirectories {

	private static final String OWNER_FILE = "owner.pid";

	private NodeDirectories() {
	}

	public static Path temporaryRoot() {
		return Path.of(System.getProperty("java.io.tmpdir"), "cassandra-launcher");
	}

	public static Path newTemporary(String prefix) {
		try {
			Path root = Files.createDirectories(temporaryRoot());
			sweepStale(root);
			return Files.createTempDirectory(root, prefix);
		}
		catch (IOException ex) {
			throw new java.io.UncheckedIOException("Cannot create a temporary node directory", ex);
		}
	}

	public static void prepare(NodeSpec spec) throws IOException {
		Files.createDirectories(spec.directory().resolve("conf"));
		Files.createDirectories(spec.directory().resolve("logs"));
		Files.createDirectories(spec.directory().resolve("data"));
		Files.writeString(spec.configFile(), CassandraYaml.render(spec));
		Files.writeString(spec.logbackFile(), CassandraYaml.logback());
	}

	public static void recordOwner(Path directory, long pid) {
		try {
			Files.writeString(directory.resolve(OWNER_FILE), Long.toString(pid));
		}
		catch (IOException ex) {
			// only used for sweeping
		}
	}

	/** Deletes temporary node directories whose owning process is no longer alive. */
	static void sweepStale(Path root) {
		Instant cutoff = Instant.now().minus(Duration.ofMinutes(2));
		try (Stream<Path> dirs = Files.list(root)) {
			dirs.filter(Files::isDirectory).filter((dir) -> isStale(dir, cutoff)).forEach((dir) -> {
				try {
					delete(dir);
				}
				catch (IOException ex) {
					// another sweeper or a live node: leave it
				}
			});
		}
		catch (IOException ex) {
			// nothing to sweep
		}
	}

	private static boolean isStale(Path dir, Instant cutoff) {
		try {
			if (Files.getLastModifiedTime(dir).toInstant().isAfter(cutoff)) {
				return false;
			}
			Path owner = dir.resolve(OWNER_FILE);
			if (!Files.exists(owner)) {
				return true;
			}
			long pid = Long.parseLong(Files.readString(owner).trim());
			return ProcessHandle.of(pid).map((handle) -> !handle.isAlive()).orElse(true);
		}
		catch (IOException | NumberFormatException ex) {
			return false;
		}
	}

	public static void delete(Path root) throws IOException {
		if (!Files.exists(root)) {
			return;
		}
		Files.walkFileTree(root, new SimpleFileVisitor<>() {
			@Override
			public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
				deleteIfPresent(file);
				return FileVisitResult.CONTINUE;
			}

			@Override
			public FileVisitResult visitFileFailed(Path file, IOException ex) {
				return FileVisitResult.CONTINUE;
			}

			@Override
			public FileVisitResult postVisitDirectory(Path dir, IOException ex) throws IOException {
				deleteIfPresent(dir);
				return FileVisitResult.CONTINUE;
			}
		});
	}

	private static void deleteIfPresent(Path path) throws IOException {
		try {
			Files.deleteIfExists(path);
		}
		catch (NoSuchFileException ex) {
			// raced with the node
		}
	}

}
