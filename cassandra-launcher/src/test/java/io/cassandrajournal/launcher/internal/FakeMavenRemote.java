package io.cassandrajournal.launcher.internal;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A Maven repository over HTTP for tests: serves the files under a directory (as Maven Central lays them out),
 * answers {@code .sha1} requests with the SHA-1 of the file (unless a wrong one is set), HEAD with the length.
 */
final class FakeMavenRemote implements AutoCloseable {

	private final Path root;

	private final HttpServer server;

	private final List<String> requests = new CopyOnWriteArrayList<>();

	private final Map<String, String> wrongSha1 = new ConcurrentHashMap<>();

	FakeMavenRemote(Path root) {
		this.root = root;
		try {
			this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		this.server.createContext("/maven2/", this::handle);
		this.server.start();
	}

	URI uri() {
		return URI.create("http://127.0.0.1:" + this.server.getAddress().getPort() + "/maven2");
	}

	/** @return the paths requested with GET (below the repository root), in order */
	List<String> gets() {
		return this.requests;
	}

	void serveWrongSha1For(String relativePath) {
		this.wrongSha1.put(relativePath, "0000000000000000000000000000000000000000");
	}

	private void handle(HttpExchange exchange) throws IOException {
		try (exchange) {
			String relative = exchange.getRequestURI().getPath().substring("/maven2/".length());
			boolean sha1 = relative.endsWith(".sha1");
			String artifact = sha1 ? relative.substring(0, relative.length() - ".sha1".length()) : relative;
			Path file = this.root.resolve(artifact).normalize();
			if (!file.startsWith(this.root) || !Files.isRegularFile(file)) {
				exchange.sendResponseHeaders(404, -1);
				return;
			}
			byte[] body;
			if (sha1) {
				body = this.wrongSha1.getOrDefault(artifact, sha1Of(file)).getBytes();
			}
			else {
				body = Files.readAllBytes(file);
			}
			if ("HEAD".equals(exchange.getRequestMethod())) {
				exchange.getResponseHeaders().add("Content-Length", Long.toString(body.length));
				exchange.sendResponseHeaders(200, -1);
				return;
			}
			if (!sha1) {
				this.requests.add(relative);
			}
			exchange.sendResponseHeaders(200, body.length);
			try (OutputStream out = exchange.getResponseBody()) {
				out.write(body);
			}
		}
	}

	static String sha1Of(Path file) throws IOException {
		try {
			return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(Files.readAllBytes(file)));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Override
	public void close() {
		this.server.stop(0);
	}

}
