package io.cassandrajournal.launcher.internal;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

import io.cassandrajournal.launcher.CassandraLaunchException;
import io.cassandrajournal.launcher.CommitLogMode;

/**
 * Builds the child JVM's command line: Cassandra's own server flags for JDK 11/17, the heap, the node's
 * files, and a classpath of the launcher's entry point (copied into the node's directory) and Cassandra's jars
 * from this machine's local Maven repository (see {@link CassandraArtifacts}).
 */
public final class JvmCommand {

	private static final List<String> SERVER_FLAGS = List.of("-ea", "-da:net.openhft...",
			"-XX:+UseThreadPriorities", "-Xss256k", "-XX:+UseTLAB", "-XX:+ResizeTLAB", "-XX:+PerfDisableSharedMem",
			"-Djava.net.preferIPv4Stack=true", "-XX:+UseG1GC", "-XX:+ParallelRefProcEnabled",
			"-XX:MaxTenuringThreshold=1", "-XX:G1HeapRegionSize=16m", "-XX:G1RSetUpdatingPauseTimePercent=5",
			"-XX:MaxGCPauseMillis=300", "-XX:InitiatingHeapOccupancyPercent=70", "-XX:+ExitOnOutOfMemoryError",
			"-Djdk.attach.allowAttachSelf=true", "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
			"--add-exports=java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
			"--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED", "--add-exports=java.rmi/sun.rmi.server=ALL-UNNAMED",
			"--add-exports=java.sql/java.sql=ALL-UNNAMED", "--add-exports=java.base/java.lang.ref=ALL-UNNAMED",
			"--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
			"--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
			"--add-exports=jdk.attach/sun.tools.attach=ALL-UNNAMED",
			"--add-opens=java.base/java.lang.module=ALL-UNNAMED",
			"--add-opens=java.base/jdk.internal.loader=ALL-UNNAMED",
			"--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
			"--add-opens=java.base/jdk.internal.reflect=ALL-UNNAMED",
			"--add-opens=java.base/jdk.internal.math=ALL-UNNAMED",
			"--add-opens=java.base/jdk.internal.module=ALL-UNNAMED",
			"--add-opens=java.base/jdk.internal.util.jar=ALL-UNNAMED",
			"--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED",
			"--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.io=ALL-UNNAMED",
			"--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
			"--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
			"--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.util=ALL-UNNAMED",
			"-Dio.netty.tryReflectionSetAccessible=true", "-Dio.netty.allocator.useCacheForAllThreads=true",
			"-Dio.netty.allocator.maxOrder=11", "-Dcassandra.skip_wait_for_gossip_to_settle=0",
			"-Dcassandra.superuser_setup_delay_ms=0", "-Dcassandra.shutdown_announce_in_ms=0",
			"-Dcassandra-foreground=yes");

	private JvmCommand() {
	}

	public static List<String> build(NodeSpec spec) {
		List<String> command = new ArrayList<>();
		command.add(spec.javaExecutable().toString());
		command.add("-Xms" + spec.initialHeap());
		command.add("-Xmx" + spec.maxHeap());
		command.addAll(SERVER_FLAGS);
		if (spec.processors() > 0) {
			command.add("-XX:ActiveProcessorCount=" + spec.processors());
		}
		command.add("-Dcassandra.ring_delay_ms=" + spec.ringDelay().toMillis());
		if (spec.commitLogMode() == CommitLogMode.BATCH_SKIP_SYNC) {
			command.add("-Dcassandra.skip_sync=true");
		}
		if (!spec.flushSchemaChanges()) {
			command.add("-Dcassandra.test.flush_local_schema_changes=false");
		}
		Path dir = spec.directory().toAbsolutePath();
		command.add("-Dcassandra.config=" + spec.configFile().toAbsolutePath().toUri());
		command.add("-Dcassandra.storagedir=" + dir.resolve("data"));
		command.add("-Dcassandra.logdir=" + dir.resolve("logs"));
		command.add("-Dlogback.configurationFile=" + spec.logbackFile().toAbsolutePath());
		command.add("-D" + ChildMain.PARENT_PID + "=" + ProcessHandle.current().pid());
		if (spec.temporary()) {
			command.add("-D" + ChildMain.WIPE_ON_ORPHAN + "=" + dir);
		}
		command.add("-cp");
		command.add(classpath(dir));
		command.add(ChildMain.class.getName());
		return command;
	}

	/**
	 * @param nodeDirectory the node's directory, where the child's entry point is copied
	 * @return the child JVM's classpath: the entry point's directory, then Cassandra's jars
	 */
	static String classpath(Path nodeDirectory) {
		List<String> entries = new ArrayList<>();
		entries.add(installChildMain(nodeDirectory).toString());
		for (Path jar : CassandraArtifacts.fromEnvironment().resolve()) {
			entries.add(jar.toString());
		}
		return String.join(File.pathSeparator, entries);
	}

	/**
	 * Copies {@link ChildMain}'s class file into {@code <node directory>/launcher/}. The launcher's own location
	 * cannot go on the child's classpath: inside a Spring Boot fat jar it is a jar nested in another jar, which a
	 * plain JVM cannot read ("Could not find or load main class"). Reading the class as a resource works from a
	 * directory, a jar and a nested jar alike. ChildMain uses no other class of the launcher, so it is enough.
	 * @param nodeDirectory the node's directory
	 * @return the classpath entry holding {@code ChildMain}
	 */
	static Path installChildMain(Path nodeDirectory) {
		Path root = nodeDirectory.toAbsolutePath().resolve("launcher");
		String name = ChildMain.class.getName().replace('.', '/') + ".class";
		Path target = root.resolve(name);
		try (InputStream in = ChildMain.class.getResourceAsStream("/" + name)) {
			if (in == null) {
				throw new CassandraLaunchException("Cannot read " + name + " from the cassandra-launcher classes ("
						+ ChildMain.class.getProtectionDomain().getCodeSource() + ")");
			}
			Files.createDirectories(target.getParent());
			Path temp = Files.createTempFile(target.getParent(), "ChildMain", ".tmp");
			try {
				Files.copy(in, temp, StandardCopyOption.REPLACE_EXISTING);
				Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
			}
			finally {
				Files.deleteIfExists(temp);
			}
		}
		catch (IOException ex) {
			throw new CassandraLaunchException("Cannot copy the launcher's entry point into " + root + ": " + ex, ex);
		}
		return root;
	}

}
