package io.cassandrajournal.launcher.internal;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.List;

import io.cassandrajournal.launcher.CassandraLaunchException;

/**
 * Finds ports that are free on every given loopback address, so that several test JVMs, and the nodes of
 * one cluster (same port, different 127.0.0.x), never collide.
 */
public final class Ports {

	private Ports() {
	}

	public static int freePort(List<String> hosts) {
		for (int attempt = 0; attempt < 50; attempt++) {
			int candidate;
			try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(hosts.get(0)))) {
				candidate = socket.getLocalPort();
			}
			catch (IOException ex) {
				throw new CassandraLaunchException("Cannot open a socket on " + hosts.get(0) + ": " + ex, ex);
			}
			if (hosts.stream().allMatch((host) -> bindable(host, candidate))) {
				return candidate;
			}
		}
		throw new CassandraLaunchException("No port is free on all of " + hosts);
	}

	public static boolean bindable(String host, int port) {
		try (ServerSocket socket = new ServerSocket()) {
			socket.setReuseAddress(false);
			socket.bind(new InetSocketAddress(InetAddress.getByName(host), port), 1);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

}
