package io.cassandrajournal.launcher.internal;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;

/**
 * Asks a CQL port whether it speaks the native protocol: sends an {@code OPTIONS} frame (protocol v4) and
 * expects {@code SUPPORTED}. An open TCP port alone is not proof, since another process may hold it.
 */
public final class CqlProbe {

	private static final byte OPCODE_OPTIONS = 0x05;

	private static final byte OPCODE_SUPPORTED = 0x06;

	private CqlProbe() {
	}

	public static boolean answers(InetSocketAddress address, int timeoutMillis) {
		try (Socket socket = new Socket()) {
			socket.connect(address, timeoutMillis);
			socket.setSoTimeout(timeoutMillis);
			OutputStream out = socket.getOutputStream();
			out.write(new byte[] { 0x04, 0x00, 0x00, 0x00, OPCODE_OPTIONS, 0x00, 0x00, 0x00, 0x00 });
			out.flush();
			DataInputStream in = new DataInputStream(socket.getInputStream());
			byte[] header = new byte[9];
			in.readFully(header);
			return (header[0] & 0x7F) == 0x04 && (header[0] & 0x80) != 0 && header[4] == OPCODE_SUPPORTED;
		}
		catch (IOException ex) {
			return false;
		}
	}

	public static boolean portInUse(String host, int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(host, port), 200);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

}
