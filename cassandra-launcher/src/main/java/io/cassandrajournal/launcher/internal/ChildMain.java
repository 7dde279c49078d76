package io.cassandrajournal.launcher.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Entry point of the child JVM. Starts a watchdog on the parent JVM, then hands over to Cassandra's own
 * {@code CassandraDaemon}. Cassandra is reached by reflection: its classes are on the child's classpath
 * only, never on the launcher's.
 * <p>
 * When the parent dies (even by {@code SIGKILL}) the node exits: a temporary node deletes its directory
 * and halts at once; a persistent one exits through Cassandra's shutdown hook (drain), with a halt as
 * backstop after {@value #DRAIN_BACKSTOP_MILLIS} ms.
 * <p>
 * This class is copied alone into the node's directory and run from there (see
 * {@code JvmCommand.installChildMain}): it must use no other class of the launcher, nor anonymous or inner classes
 * (lambdas are fine: they live in this class file).
 */
public final class ChildMain {

	static final String PARENT_PID = "cassandra.launcher.parent_pid";

	static final String WIPE_ON_ORPHAN = "cassandra.launcher.wipe_on_orphan";

	private static final long DRAIN_BACKSTOP_MILLIS = 5000;

	private ChildMain() {
	}

	public static void main(String[] args) throws Throwable {
		String parentPid = System.getProperty(PARENT_PID);
		if (parentPid != null) {
			watchParent(Long.parseLong(parentPid));
		}
		Class<?> daemon = Class.forName("org.apache.cassandra.service.CassandraDaemon");
		try {
			daemon.getMethod("main", String[].class).invoke(null, (Object) args);
		}
		catch (java.lang.reflect.InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

	private static void watchParent(long pid) {
		Optional<ProcessHandle> parent = ProcessHandle.of(pid);
		if (parent.isEmpty() || !parent.get().isAlive()) {
			System.err.println("cassandra-launcher: parent JVM " + pid + " is gone; not starting");
			Runtime.getRuntime().halt(3);
		}
		// Two signals, whichever comes first: the end of stdin (a pipe from the parent, closed by the kernel
		// the instant the parent dies) and the parent's exit as seen by ProcessHandle (polled, slower).
		daemon("cassandra-launcher-parent-watchdog", () -> {
			parent.get().onExit().join();
			orphaned(pid);
		});
		daemon("cassandra-launcher-stdin-watchdog", () -> {
			try {
				while (System.in.read() != -1) {
					// the parent never writes; just wait for end of stream
				}
			}
			catch (IOException ex) {
				// a broken pipe means the same
			}
			// Process.destroy() in the parent sends SIGTERM and then closes this pipe too: a deliberate stop,
			// not an orphan. Give the signal a moment; if this JVM is shutting down, leave the node alone so
			// Cassandra drains and keeps its data.
			sleepQuietly(1000);
			if (!shuttingDown()) {
				orphaned(pid);
			}
		});
	}

	private static boolean shuttingDown() {
		Thread probe = new Thread(() -> {
		});
		try {
			Runtime.getRuntime().addShutdownHook(probe);
			Runtime.getRuntime().removeShutdownHook(probe);
			return false;
		}
		catch (IllegalStateException ex) {
			return true;
		}
	}

	private static void sleepQuietly(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static void daemon(String name, Runnable task) {
		Thread thread = new Thread(task, name);
		thread.setDaemon(true);
		thread.start();
	}

	private static void deleteTree(Path root) throws IOException {
		if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
			return;
		}
		try (Stream<Path> paths = Files.walk(root)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> {
				try {
					Files.deleteIfExists(path);
				}
				catch (IOException ex) {
					// raced with the node, or not empty yet: best effort
				}
			});
		}
	}

	private static synchronized void orphaned(long pid) {
		System.err.println("cassandra-launcher: parent JVM " + pid + " exited; stopping this node");
		String wipe = System.getProperty(WIPE_ON_ORPHAN);
		if (wipe != null) {
			try {
				deleteTree(Path.of(wipe));
			}
			catch (IOException | RuntimeException ex) {
				// best effort: the next launcher start sweeps what is left
			}
			Runtime.getRuntime().halt(0);
		}
		daemon("cassandra-launcher-halt-backstop", () -> {
			sleepQuietly(DRAIN_BACKSTOP_MILLIS);
			Runtime.getRuntime().halt(0);
		});
		System.exit(0);
	}

}
