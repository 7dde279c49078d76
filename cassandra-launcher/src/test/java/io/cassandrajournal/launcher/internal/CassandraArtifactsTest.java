package io.cassandrajournal.launcher.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.cassandrajournal.launcher.CassandraLaunchException;
import io.cassandrajournal.launcher.internal.CassandraArtifacts.Artifact;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The run-time resolver of Cassandra's jars against a local fake of Maven Central.
 */
class CassandraArtifactsTest {

	private static final Artifact PRESENT = new Artifact("org.example", "present", "jar", "", "1.0");

	private static final Artifact MISSING = new Artifact("org.example.deep", "missing", "jar", "natives", "2.0");

	@TempDir
	Path remoteRoot;

	@TempDir
	Path localRepo;

	private final ByteArrayOutputStream progress = new ByteArrayOutputStream();

	@Test
	void parsesDependencyListOutputWithScopesModulesAndClassifiers() {
		String listing = """

				The following files have been resolved:
				   org.apache.cassandra:cassandra-all:jar:5.0.9:provided -- module cassandra.all (auto)
				   net.java.dev.jna:jna:jar:5.13.0:provided -- module com.sun.jna [auto]
				   io.netty:netty-transport-native-epoll:jar:linux-x86_64:4.1.119.Final:provided
				   org.slf4j:slf4j-api:jar:2.0.17:provided
				""";
		List<Artifact> artifacts = CassandraArtifacts.parse(listing);
		assertThat(artifacts).extracting(Artifact::toString)
			.containsExactly("org.apache.cassandra:cassandra-all:jar:5.0.9", "net.java.dev.jna:jna:jar:5.13.0",
					"io.netty:netty-transport-native-epoll:jar:linux-x86_64:4.1.119.Final",
					"org.slf4j:slf4j-api:jar:2.0.17");
		assertThat(artifacts.get(0).relativePath())
			.isEqualTo("org/apache/cassandra/cassandra-all/5.0.9/cassandra-all-5.0.9.jar");
		assertThat(artifacts.get(2).relativePath()).isEqualTo(
				"io/netty/netty-transport-native-epoll/4.1.119.Final/netty-transport-native-epoll-4.1.119.Final-linux-x86_64.jar");
	}

	@Test
	void theBuildRecordedCassandrasClosureAsCoordinatesNotPaths() {
		List<Artifact> recorded = CassandraArtifacts.recorded();
		assertThat(recorded).hasSizeGreaterThan(50);
		assertThat(recorded).extracting(Artifact::artifactId).contains("cassandra-all");
		assertThat(recorded).allSatisfy((artifact) -> assertThat(artifact.toString()).doesNotContain("/"));
	}

	@Test
	void fetchesOnlyTheMissingJarsVerifiedWithOneProgressLine() throws Exception {
		byte[] content = randomBytes(3 * 1024 * 1024);
		write(this.remoteRoot.resolve(MISSING.relativePath()), content);
		write(this.localRepo.resolve(PRESENT.relativePath()), "present".getBytes());

		try (FakeMavenRemote remote = new FakeMavenRemote(this.remoteRoot)) {
			List<Path> jars = artifacts(remote.uri()).resolve();

			assertThat(jars).containsExactly(this.localRepo.resolve(PRESENT.relativePath()),
					this.localRepo.resolve(MISSING.relativePath()));
			assertThat(Files.readAllBytes(jars.get(1))).isEqualTo(content);
			assertThat(remote.gets()).containsExactly(MISSING.relativePath());
		}
		assertThat(this.progress.toString(StandardCharsets.UTF_8).lines()).singleElement()
			.asString()
			.startsWith("cassandra-launcher: fetching 1 of 2 Cassandra jars (3 MB) into " + this.localRepo)
			.contains("from http://127.0.0.1:");
		assertThat(leftovers()).isEmpty();
	}

	@Test
	void nothingIsFetchedWhenEveryJarIsPresent() throws Exception {
		write(this.localRepo.resolve(PRESENT.relativePath()), "present".getBytes());
		write(this.localRepo.resolve(MISSING.relativePath()), "present too".getBytes());
		try (FakeMavenRemote remote = new FakeMavenRemote(this.remoteRoot)) {
			assertThat(artifacts(remote.uri()).resolve()).hasSize(2);
			assertThat(remote.gets()).isEmpty();
		}
		assertThat(this.progress.size()).isZero();
	}

	@Test
	void aJarWhoseSha1DoesNotMatchIsRefusedAndNothingIsLeftBehind() throws Exception {
		write(this.remoteRoot.resolve(MISSING.relativePath()), randomBytes(1000));
		write(this.localRepo.resolve(PRESENT.relativePath()), "present".getBytes());
		try (FakeMavenRemote remote = new FakeMavenRemote(this.remoteRoot)) {
			remote.serveWrongSha1For(MISSING.relativePath());
			assertThatExceptionOfType(CassandraLaunchException.class).isThrownBy(artifacts(remote.uri())::resolve)
				.withMessageContaining("SHA-1")
				.withMessageContaining(MISSING.relativePath());
		}
		assertThat(this.localRepo.resolve(MISSING.relativePath())).doesNotExist();
		assertThat(leftovers()).isEmpty();
	}

	@Test
	void anUnreachableJarFailsWithWhatToDo() throws Exception {
		write(this.localRepo.resolve(PRESENT.relativePath()), "present".getBytes());
		try (FakeMavenRemote remote = new FakeMavenRemote(this.remoteRoot)) {
			assertThatExceptionOfType(CassandraLaunchException.class).isThrownBy(artifacts(remote.uri())::resolve)
				.withMessageContaining("Cannot fetch " + MISSING)
				.withMessageContaining("HTTP 404")
				.withMessageContaining(CassandraArtifacts.REMOTE_PROPERTY)
				.withMessageContaining("mvn dependency:get");
		}
	}

	@Test
	void twoJvmsFetchingTheSameJarsAtOnceBothGetWholeJars() throws Exception {
		byte[] content = randomBytes(8 * 1024 * 1024);
		byte[] other = randomBytes(10);
		write(this.remoteRoot.resolve(MISSING.relativePath()), content);
		write(this.remoteRoot.resolve(PRESENT.relativePath()), other);
		try (FakeMavenRemote remote = new FakeMavenRemote(this.remoteRoot)) {
			// two resolvers share nothing but the directory, as two JVMs would
			CassandraArtifacts first = artifacts(remote.uri());
			CassandraArtifacts second = artifacts(remote.uri());
			CompletableFuture<List<Path>> a = CompletableFuture.supplyAsync(first::resolve);
			CompletableFuture<List<Path>> b = CompletableFuture.supplyAsync(second::resolve);
			assertThat(a.get()).isEqualTo(b.get());
		}
		assertThat(Files.readAllBytes(this.localRepo.resolve(MISSING.relativePath()))).isEqualTo(content);
		assertThat(Files.readAllBytes(this.localRepo.resolve(PRESENT.relativePath()))).isEqualTo(other);
		assertThat(leftovers()).isEmpty();
	}

	@Test
	void localRepositoryIsThePropertyElseTheSettingsElseTheDefault(@TempDir Path home) throws IOException {
		Path settings = home.resolve(".m2").resolve("settings.xml");
		assertThat(CassandraArtifacts.localRepository(null, settings, home))
			.isEqualTo(home.resolve(".m2").resolve("repository"));
		write(settings, """
				<?xml version="1.0" encoding="UTF-8"?>
				<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0">
				  <localRepository>${user.home}/elsewhere/repo</localRepository>
				  <mirrors>
				    <mirror><id>internal</id><mirrorOf>external:http:*</mirrorOf><url>http://ignored</url></mirror>
				    <mirror><id>corp</id><mirrorOf>corp-releases,central</mirrorOf><url>https://nexus.example/central/</url></mirror>
				  </mirrors>
				</settings>
				""".getBytes(StandardCharsets.UTF_8));
		assertThat(CassandraArtifacts.localRepository(null, settings, home)).isEqualTo(home.resolve("elsewhere/repo"));
		assertThat(CassandraArtifacts.localRepository(" /opt/repo ", settings, home)).isEqualTo(Path.of("/opt/repo"));
		assertThat(CassandraArtifacts.remote(null, settings)).isEqualTo(URI.create("https://nexus.example/central/"));
		assertThat(CassandraArtifacts.remote("http://mirror/maven2", settings))
			.isEqualTo(URI.create("http://mirror/maven2"));
		assertThat(CassandraArtifacts.remote(null, home.resolve("none.xml"))).isEqualTo(CassandraArtifacts.CENTRAL);
	}

	private CassandraArtifacts artifacts(URI remote) {
		return new CassandraArtifacts(List.of(PRESENT, MISSING), this.localRepo, remote,
				new PrintStream(this.progress, true, StandardCharsets.UTF_8));
	}

	private List<Path> leftovers() throws IOException {
		try (Stream<Path> files = Files.walk(this.localRepo)) {
			return files.filter((file) -> file.getFileName().toString().endsWith(".part")).toList();
		}
	}

	private static byte[] randomBytes(int size) {
		byte[] bytes = new byte[size];
		new Random(size).nextBytes(bytes);
		return bytes;
	}

	private static void write(Path file, byte[] content) throws IOException {
		Files.createDirectories(file.getParent());
		Files.write(file, content);
	}

}
