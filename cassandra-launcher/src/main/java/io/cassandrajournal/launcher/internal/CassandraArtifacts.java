package io.cassandrajournal.launcher.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilderFactory;

import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import io.cassandrajournal.launcher.CassandraLaunchException;

/**
 * Cassandra's jars for the child JVM, found at run time by their Maven coordinates. The build records the
 * resolved runtime closure of {@code cassandra-all} as coordinates ({@value #RESOURCE}, written by
 * {@code dependency:list}); no path of the machine that built the launcher is kept. Each coordinate is looked up
 * in this machine's local Maven repository: the {@code maven.repo.local} system property, else
 * {@code <localRepository>} of {@code ~/.m2/settings.xml}, else {@code ~/.m2/repository}. Missing jars are
 * fetched from Maven Central ({@value #REMOTE_PROPERTY} overrides it; else a mirror of {@code central} or
 * {@code *} in {@code settings.xml}), checked against the repository's {@code .sha1}, and written through a
 * temporary file and a move, so two JVMs fetching at once never leave a torn jar.
 */
public final class CassandraArtifacts {

	static final String RESOURCE = "/io/cassandrajournal/launcher/cassandra-artifacts.txt";

	/** System property naming the Maven repository to fetch missing jars from. */
	public static final String REMOTE_PROPERTY = "cassandra.launcher.maven.repository";

	static final URI CENTRAL = URI.create("https://repo.maven.apache.org/maven2");

	private static final int PARALLEL_FETCHES = 4;

	private static volatile List<Artifact> recorded;

	private final List<Artifact> artifacts;

	private final Path localRepository;

	private final URI remote;

	private final PrintStream progress;

	CassandraArtifacts(List<Artifact> artifacts, Path localRepository, URI remote, PrintStream progress) {
		this.artifacts = List.copyOf(artifacts);
		this.localRepository = localRepository.toAbsolutePath();
		this.remote = URI.create(remote.toString().replaceAll("/+$", ""));
		this.progress = progress;
	}

	/**
	 * @return the artifacts recorded by the build, in this machine's repository and fetching from the
	 * configured remote, reporting to {@code System.err}
	 */
	public static CassandraArtifacts fromEnvironment() {
		Path home = Path.of(System.getProperty("user.home"));
		Path settings = home.resolve(".m2").resolve("settings.xml");
		return new CassandraArtifacts(recorded(), localRepository(System.getProperty("maven.repo.local"), settings,
				home), remote(System.getProperty(REMOTE_PROPERTY), settings), System.err);
	}

	/** @return the local repository jars are looked up in */
	public Path localRepository() {
		return this.localRepository;
	}

	/**
	 * Returns every jar of Cassandra's runtime classpath, in the order Maven resolved them, fetching those
	 * missing from the local repository first.
	 * @return the jars, all present
	 * @throws CassandraLaunchException if a jar cannot be fetched or its checksum does not match
	 */
	public List<Path> resolve() {
		List<Path> jars = new ArrayList<>();
		List<Artifact> missing = new ArrayList<>();
		for (Artifact artifact : this.artifacts) {
			Path jar = this.localRepository.resolve(artifact.relativePath());
			jars.add(jar);
			if (!Files.isRegularFile(jar)) {
				missing.add(artifact);
			}
		}
		if (!missing.isEmpty()) {
			fetch(missing);
		}
		return jars;
	}

	private void fetch(List<Artifact> missing) {
		HttpClient client = HttpClient.newBuilder()
			.connectTimeout(Duration.ofSeconds(20))
			.followRedirects(HttpClient.Redirect.NORMAL)
			.build();
		long bytes = totalSize(client, missing);
		this.progress.println("cassandra-launcher: fetching " + missing.size() + " of " + this.artifacts.size()
				+ " Cassandra jars" + ((bytes > 0) ? " (" + Math.max(1, bytes / (1024 * 1024)) + " MB)" : "") + " into "
				+ this.localRepository + " from " + this.remote);
		ExecutorService pool = Executors.newFixedThreadPool(Math.min(PARALLEL_FETCHES, missing.size()), (task) -> {
			Thread thread = new Thread(task, "cassandra-launcher-fetch");
			thread.setDaemon(true);
			return thread;
		});
		try {
			List<Future<?>> fetches = new ArrayList<>();
			for (Artifact artifact : missing) {
				fetches.add(pool.submit(() -> {
					fetchOne(client, artifact);
					return null;
				}));
			}
			for (Future<?> fetch : fetches) {
				fetch.get();
			}
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof CassandraLaunchException launch) {
				throw launch;
			}
			throw new CassandraLaunchException("Cannot fetch Cassandra's jars: " + ex.getCause(), ex.getCause());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new CassandraLaunchException("Interrupted while fetching Cassandra's jars", ex);
		}
		finally {
			pool.shutdownNow();
		}
	}

	private long totalSize(HttpClient client, List<Artifact> missing) {
		List<CompletableFuture<Long>> sizes = new ArrayList<>();
		for (Artifact artifact : missing) {
			HttpRequest head = HttpRequest.newBuilder(uri(artifact, ""))
				.method("HEAD", HttpRequest.BodyPublishers.noBody())
				.timeout(Duration.ofSeconds(20))
				.build();
			sizes.add(client.sendAsync(head, HttpResponse.BodyHandlers.discarding())
				.thenApply((response) -> (response.statusCode() == 200)
						? response.headers().firstValueAsLong("Content-Length").orElse(-1) : -1L)
				.exceptionally((ex) -> -1L));
		}
		long total = 0;
		for (CompletableFuture<Long> size : sizes) {
			long one = size.join();
			if (one < 0) {
				return -1;
			}
			total += one;
		}
		return total;
	}

	private void fetchOne(HttpClient client, Artifact artifact) throws IOException, InterruptedException {
		Path target = this.localRepository.resolve(artifact.relativePath());
		String expected = expectedSha1(client, artifact);
		Files.createDirectories(target.getParent());
		Path temp = Files.createTempFile(target.getParent(), target.getFileName().toString() + ".", ".part");
		try {
			URI uri = uri(artifact, "");
			HttpResponse<InputStream> response;
			try {
				response = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofMinutes(5)).build(),
						HttpResponse.BodyHandlers.ofInputStream());
			}
			catch (IOException ex) {
				throw unreachable(artifact, uri, ex.toString(), ex);
			}
			String actual;
			try (InputStream body = response.body()) {
				if (response.statusCode() != 200) {
					throw unreachable(artifact, uri, "HTTP " + response.statusCode(), null);
				}
				DigestInputStream digesting = new DigestInputStream(body, sha1());
				Files.copy(digesting, temp, StandardCopyOption.REPLACE_EXISTING);
				actual = HexFormat.of().formatHex(digesting.getMessageDigest().digest());
			}
			if (!actual.equals(expected)) {
				throw new CassandraLaunchException("Fetched " + uri + " but its SHA-1 is " + actual + ", not " + expected
						+ " as " + uri + ".sha1 says: a broken download or a misbehaving proxy. Nothing was written to "
						+ this.localRepository + "; try again, or set -D" + REMOTE_PROPERTY + " to another repository.");
			}
			try {
				Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
			}
			catch (AtomicMoveNotSupportedException ex) {
				Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
			}
		}
		finally {
			Files.deleteIfExists(temp);
		}
	}

	private String expectedSha1(HttpClient client, Artifact artifact) throws InterruptedException {
		URI uri = uri(artifact, ".sha1");
		HttpResponse<String> response;
		try {
			response = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).build(),
					HttpResponse.BodyHandlers.ofString(StandardCharsets.US_ASCII));
		}
		catch (IOException ex) {
			throw unreachable(artifact, uri, ex.toString(), ex);
		}
		if (response.statusCode() != 200) {
			throw unreachable(artifact, uri, "HTTP " + response.statusCode(), null);
		}
		String body = response.body().trim();
		String sha1 = body.isEmpty() ? "" : body.split("\\s+")[0].toLowerCase(Locale.ROOT);
		if (!sha1.matches("[0-9a-f]{40}")) {
			throw new CassandraLaunchException(uri + " does not hold a SHA-1 checksum: '" + body + "'");
		}
		return sha1;
	}

	private CassandraLaunchException unreachable(Artifact artifact, URI uri, String reason, Throwable cause) {
		return new CassandraLaunchException("Cannot fetch " + artifact + " (" + uri + "): " + reason + ". The embedded "
				+ "Cassandra node runs from Cassandra's jars in the local Maven repository " + this.localRepository
				+ ", where they are missing. Either let this machine reach " + this.remote + " once, point -D"
				+ REMOTE_PROPERTY + " at a repository it can reach (a mirror of Maven Central), or fetch them with "
				+ "Maven: mvn dependency:get -Dartifact=org.apache.cassandra:cassandra-all:<version>"
				+ " (the -Dmaven.repo.local of this JVM, if any, must then be the same).", cause);
	}

	private URI uri(Artifact artifact, String suffix) {
		return URI.create(this.remote + "/" + artifact.relativePath().replace('\\', '/') + suffix);
	}

	private static MessageDigest sha1() {
		try {
			return MessageDigest.getInstance("SHA-1");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	static List<Artifact> recorded() {
		List<Artifact> artifacts = recorded;
		if (artifacts == null) {
			try (InputStream in = CassandraArtifacts.class.getResourceAsStream(RESOURCE)) {
				if (in == null) {
					throw new CassandraLaunchException("Resource " + RESOURCE + " is missing: cassandra-launcher was not "
							+ "built by Maven (its generate-resources phase writes it). Run ./mvnw -pl cassandra-launcher "
							+ "package");
				}
				artifacts = parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
			}
			catch (IOException ex) {
				throw new CassandraLaunchException("Cannot read " + RESOURCE, ex);
			}
			if (artifacts.isEmpty()) {
				throw new CassandraLaunchException("Resource " + RESOURCE + " names no artifact");
			}
			recorded = artifacts;
		}
		return artifacts;
	}

	/**
	 * @param listing the output of {@code dependency:list} (with scopes, optionally module names)
	 * @return its artifacts, in order; lines that are not coordinates are skipped
	 */
	static List<Artifact> parse(String listing) {
		List<Artifact> artifacts = new ArrayList<>();
		for (String raw : listing.split("\\R")) {
			String line = raw.strip();
			int module = line.indexOf(" -- ");
			if (module >= 0) {
				line = line.substring(0, module).strip();
			}
			if (line.isEmpty() || line.contains(" ")) {
				continue;
			}
			String[] parts = line.split(":");
			if (parts.length == 5) {
				artifacts.add(new Artifact(parts[0], parts[1], parts[2], "", parts[3]));
			}
			else if (parts.length == 6) {
				artifacts.add(new Artifact(parts[0], parts[1], parts[2], parts[3], parts[4]));
			}
		}
		return artifacts;
	}

	/**
	 * @param property the {@code maven.repo.local} system property, or {@code null}
	 * @param settings the user's {@code settings.xml} (need not exist)
	 * @param userHome the user's home
	 * @return the local repository Maven would use
	 */
	static Path localRepository(String property, Path settings, Path userHome) {
		if (property != null && !property.isBlank()) {
			return Path.of(property.strip()).toAbsolutePath();
		}
		Document document = read(settings);
		if (document != null) {
			String configured = text(document.getDocumentElement(), "localRepository");
			if (configured != null && !configured.isBlank()) {
				return Path.of(interpolate(configured.strip(), userHome)).toAbsolutePath();
			}
		}
		return userHome.resolve(".m2").resolve("repository");
	}

	/**
	 * @param property the {@value #REMOTE_PROPERTY} system property, or {@code null}
	 * @param settings the user's {@code settings.xml} (need not exist)
	 * @return the repository to fetch from: the property, else the URL of a mirror of {@code central} (or of
	 * {@code *}) in the settings, else Maven Central
	 */
	static URI remote(String property, Path settings) {
		if (property != null && !property.isBlank()) {
			return URI.create(property.strip());
		}
		Document document = read(settings);
		if (document != null) {
			NodeList mirrors = document.getElementsByTagName("mirror");
			for (int i = 0; i < mirrors.getLength(); i++) {
				Element mirror = (Element) mirrors.item(i);
				String of = Objects.requireNonNullElse(text(mirror, "mirrorOf"), "");
				String url = text(mirror, "url");
				if (url == null || url.isBlank()) {
					continue;
				}
				for (String token : of.split(",")) {
					String scope = token.strip();
					if (scope.equals("*") || scope.equals("central") || scope.equals("external:*")) {
						return URI.create(url.strip());
					}
				}
			}
		}
		return CENTRAL;
	}

	private static Document read(Path settings) {
		if (!Files.isRegularFile(settings)) {
			return null;
		}
		try {
			DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
			factory.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
			factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
			factory.setExpandEntityReferences(false);
			return factory.newDocumentBuilder().parse(settings.toFile());
		}
		catch (Exception ex) {
			throw new CassandraLaunchException("Cannot read " + settings + " (for its <localRepository>): " + ex, ex);
		}
	}

	private static String text(Element parent, String child) {
		NodeList nodes = parent.getElementsByTagName(child);
		return (nodes.getLength() > 0) ? nodes.item(0).getTextContent() : null;
	}

	private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([^}]+)}");

	static String interpolate(String value, Path userHome) {
		UnaryOperator<String> lookup = (key) -> {
			if (key.equals("user.home")) {
				return userHome.toString();
			}
			if (key.startsWith("env.")) {
				return System.getenv(key.substring("env.".length()));
			}
			return System.getProperty(key);
		};
		Matcher matcher = PLACEHOLDER.matcher(value);
		StringBuilder result = new StringBuilder();
		while (matcher.find()) {
			String replacement = lookup.apply(matcher.group(1));
			matcher.appendReplacement(result, Matcher.quoteReplacement((replacement != null) ? replacement
					: matcher.group()));
		}
		matcher.appendTail(result);
		return result.toString();
	}

	/**
	 * One jar by its Maven coordinates.
	 *
	 * @param groupId the group
	 * @param artifactId the artifact
	 * @param type the dependency type ({@code jar}, {@code test-jar}, {@code bundle}, ...)
	 * @param classifier the classifier, empty for none
	 * @param version the version
	 */
	record Artifact(String groupId, String artifactId, String type, String classifier, String version) {

		/** @return the jar's path below a repository root, in Maven's layout */
		String relativePath() {
			String extension = switch (this.type) {
				case "jar", "test-jar", "bundle", "maven-plugin", "ejb", "ejb-client", "java-source", "javadoc" -> "jar";
				default -> this.type;
			};
			String effectiveClassifier = (this.type.equals("test-jar") && this.classifier.isEmpty()) ? "tests"
					: this.classifier;
			String file = this.artifactId + "-" + this.version
					+ (effectiveClassifier.isEmpty() ? "" : "-" + effectiveClassifier) + "." + extension;
			return this.groupId.replace('.', '/') + "/" + this.artifactId + "/" + this.version + "/" + file;
		}

		@Override
		public String toString() {
			return this.groupId + ":" + this.artifactId + ":" + this.type
					+ (this.classifier.isEmpty() ? "" : ":" + this.classifier) + ":" + this.version;
		}

	}

}
