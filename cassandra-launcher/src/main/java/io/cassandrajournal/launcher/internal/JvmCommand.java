package io.cassandrajournal.launcher.internal;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.cassandrajournal.launcher.CassandraLaunchException;
import io.cassandrajournal.launcher.CommitLogMode;

/**
 * Builds the child JVM's command line: Cassandra's own server flags for JDK 11/17, the heap, the node's
 * files, and the classpath that Maven resolved for this module at build time.
 */
public final class JvmCommand {

	static final String CLASSPATH_RESOURCE = "/io/cassandrajournal/launcher/cassandra-classpath.txt";

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
		command.add("-Dcassandra.ring_delay_ms=" + spec.ringDelay().toMillis());
		if (spec.commitLogMode() == CommitLogMode.BATCH_SKIP_SYNC) {
			command.add("-Dcassandra.skip_sync=true");
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
		command.add(classpath());
		command.add(ChildMain.class.getName());
		return command;
	}

	static String classpath() {
		String cassandra = readCassandraClasspath();
		List<String> entries = new ArrayList<>(Arrays.asList(cassandra.split(File.pathSeparator)));
		for (String entry : entries.subList(0, Math.min(3, entries.size()))) {
			if (!Files.exists(Path.of(entry))) {
				throw new CassandraLaunchException("The Cassandra classpath recorded when cassandra-launcher was built "
						+ "names " + entry + ", which does not exist (local Maven repository moved or cleaned?). "
						+ "Rebuild it: ./mvnw -pl cassandra-launcher install");
			}
		}
		entries.add(0, ownLocation());
		return String.join(File.pathSeparator, entries);
	}

	private static String readCassandraClasspath() {
		try (InputStream in = JvmCommand.class.getResourceAsStream(CLASSPATH_RESOURCE)) {
			if (in == null) {
				throw new CassandraLaunchException("Resource " + CLASSPATH_RESOURCE + " is missing: cassandra-launcher "
						+ "was not built by Maven (its generate-resources phase writes it). Run ./mvnw -pl "
						+ "cassandra-launcher install");
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
		}
		catch (IOException ex) {
			throw new CassandraLaunchException("Cannot read " + CLASSPATH_RESOURCE, ex);
		}
	}

	private static String ownLocation() {
		try {
			return Path.of(ChildMain.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
		}
		catch (URISyntaxException | RuntimeException ex) {
			throw new CassandraLaunchException("Cannot locate the cassandra-launcher classes", ex);
		}
	}

}
