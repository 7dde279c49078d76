package io.cassandrajournal.launcher.internal;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Creates, wipes and sweeps node directories. Temporary nodes live under a folder of the current user's own,
 * {@code ${java.io.tmpdir}/cassandra-launcher-<user>/}, created with mode 0700 where the file system has POSIX
 * permissions. A folder at that place that is a symbolic link, or belongs to another user, is refused: the
 * launcher never follows another user's link into a place it would write a node's data to. Each node directory
 * holds an {@code owner.pid} with the child's pid, so a later start can remove directories whose node is gone (for
 * example after a machine reset); the sweep looks only inside this user's folder and only at directories this user
 * owns, and never follows links.
 */
public final class NodeDirectories {

	private static final String OWNER_FILE = "owner.pid";

	private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");

	private NodeDirectories() {
	}

	/** @return the current user's folder for temporary nodes (not created) */
	public static Path temporaryRoot() {
		return temporaryRoot(Path.of(System.getProperty("java.io.tmpdir")), System.getProperty("user.name", "user"));
	}

	static Path temporaryRoot(Path tmp, String user) {
		String clean = user.replaceAll("[^A-Za-z0-9._-]", "_");
		return tmp.resolve("cassandra-launcher-" + (clean.isEmpty() ? "user" : clean));
	}

	public static Path newTemporary(String prefix) {
		return newTemporary(temporaryRoot(), prefix);
	}

	static Path newTemporary(Path root, String prefix) {
		try {
			ensurePrivateRoot(root);
			sweepStale(root);
			return Files.createTempDirectory(root, prefix);
		}
		catch (IOException ex) {
			throw new java.io.UncheckedIOException("Cannot create a temporary node directory under " + root, ex);
		}
	}

	/**
	 * Creates {@code root} for this user only (0700), or checks that an existing one is a real directory this user
	 * owns, and takes group and other permissions away from it.
	 * @param root the folder
	 * @throws IOException if it cannot be created
	 * @throws IllegalStateException if it is a symbolic link, not a directory, or another user's
	 */
	static void ensurePrivateRoot(Path root) throws IOException {
		boolean posix = root.getFileSystem().supportedFileAttributeViews().contains("posix");
		if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
			Files.createDirectories(root.getParent());
			try {
				if (posix) {
					Files.createDirectory(root, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
				}
				else {
					Files.createDirectory(root);
				}
			}
			catch (FileAlreadyExistsException ex) {
				// another launcher of this user raced us: checked below
			}
		}
		if (Files.isSymbolicLink(root)) {
			throw new IllegalStateException("Refusing to use " + root + " for temporary Cassandra nodes: it is a symbolic "
					+ "link (to " + Files.readSymbolicLink(root) + "). Remove it, or give the node a directory of its own "
					+ "(journal.cassandra.embedded.directory / CassandraNode.builder().persistentDirectory(..)).");
		}
		if (!Files.isDirectory(root, LinkOption.NOFOLLOW_LINKS)) {
			throw new IllegalStateException("Refusing to use " + root + " for temporary Cassandra nodes: it is not a "
					+ "directory. Remove it.");
		}
		UserPrincipal owner = Files.getOwner(root, LinkOption.NOFOLLOW_LINKS);
		if (!ownedByCurrentUser(root, owner)) {
			throw new IllegalStateException("Refusing to use " + root + " for temporary Cassandra nodes: it belongs to "
					+ owner.getName() + ", not to " + System.getProperty("user.name") + ". Remove it, or set "
					+ "java.io.tmpdir to a folder of your own.");
		}
		if (posix) {
			Files.setPosixFilePermissions(root, OWNER_ONLY);
		}
	}

	private static boolean ownedByCurrentUser(Path path, UserPrincipal owner) throws IOException {
		Path probe = Files.createTempFile(path.getParent(), ".cassandra-launcher-owner", ".probe");
		try {
			return owner.equals(Files.getOwner(probe, LinkOption.NOFOLLOW_LINKS));
		}
		finally {
			Files.deleteIfExists(probe);
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

	/**
	 * Deletes this user's temporary node directories whose owning process is no longer alive. Only real
	 * directories (never links) owned by the owner of {@code root} are considered.
	 */
	static void sweepStale(Path root) {
		Instant cutoff = Instant.now().minus(Duration.ofMinutes(2));
		UserPrincipal us;
		try {
			us = Files.getOwner(root, LinkOption.NOFOLLOW_LINKS);
		}
		catch (IOException ex) {
			return;
		}
		try (Stream<Path> dirs = Files.list(root)) {
			dirs.filter((dir) -> Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS))
				.filter((dir) -> ownedBy(dir, us))
				.filter((dir) -> isStale(dir, cutoff))
				.forEach((dir) -> {
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

	private static boolean ownedBy(Path dir, UserPrincipal owner) {
		try {
			return owner.equals(Files.getOwner(dir, LinkOption.NOFOLLOW_LINKS));
		}
		catch (IOException ex) {
			return false;
		}
	}

	private static boolean isStale(Path dir, Instant cutoff) {
		try {
			if (Files.getLastModifiedTime(dir, LinkOption.NOFOLLOW_LINKS).toInstant().isAfter(cutoff)) {
				return false;
			}
			Path owner = dir.resolve(OWNER_FILE);
			if (!Files.exists(owner, LinkOption.NOFOLLOW_LINKS)) {
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
