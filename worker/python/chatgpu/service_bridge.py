"""The way into a hosted service's sandbox, and the app's keeper.

    python3 -m chatgpu.service_bridge '<the service's start command>'

The sandbox has no network but its own loopback: the app listens on 127.0.0.1:$PORT there,
which the worker outside cannot reach. This bridge listens on Unix sockets in the attempt
directory (files the worker can open) and pipes each connection to 127.0.0.1:$PORT:

  $CHATGPU_SERVICE_SOCKET        the requests the API sends through the tunnel
  $CHATGPU_SERVICE_READY_SOCKET  the worker's readiness checks, connected from 127.0.0.2 so
                                 that the app's access-log lines about them can be told from
                                 its users' (the worker leaves them out of the attempt's logs)

Nothing else goes in or out: the service's network is that one port.

The bridge and the app are one life: the bridge starts the app (`sh -c COMMAND`, in the
bridge's own process group), and ends as soon as the app ends, with the app's exit code (or
its signal). The app is killed if the bridge dies first (PR_SET_PDEATHSIG). So the attempt's
process ends exactly when the app does, and nothing of it stays behind.
"""
import asyncio
import ctypes
import os
import signal
import sys

TRAFFIC_SOCKET = os.environ.pop("CHATGPU_SERVICE_SOCKET")
READY_SOCKET = os.environ.pop("CHATGPU_SERVICE_READY_SOCKET", None)
PORT = int(os.environ["PORT"])
# Any address of 127.0.0.0/8 is the loopback on Linux (bwrap gives its sandbox 127.0.0.1/8).
READINESS_SOURCE = "127.0.0.2"


async def pipe(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()  # backpressure: read no faster than the other side takes
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.write_eof()
        except (OSError, RuntimeError, AttributeError):
            pass


async def connect_app(source):
    if source:
        try:
            return await asyncio.open_connection("127.0.0.1", PORT, local_addr=(source, 0))
        except OSError as err:
            if err.errno != 99:  # EADDRNOTAVAIL: a loopback with only 127.0.0.1 (not Linux)
                raise
    return await asyncio.open_connection("127.0.0.1", PORT)


def handler(source):
    async def handle(client_reader, client_writer):
        try:
            app_reader, app_writer = await connect_app(source)
        except OSError:
            client_writer.close()
            return
        try:
            await asyncio.gather(pipe(client_reader, app_writer), pipe(app_reader, client_writer))
        finally:
            app_writer.close()
            client_writer.close()

    return handle


def die_with_bridge():
    """In the app's process before exec: SIGKILL when the bridge is gone, however it ended."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the worker ends the process group


async def listen(path, source):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    return await asyncio.start_unix_server(handler(source), path=path)


async def main(command):
    servers = [await listen(TRAFFIC_SOCKET, None)]
    if READY_SOCKET:
        servers.append(await listen(READY_SOCKET, READINESS_SOURCE))
    loop = asyncio.get_running_loop()
    # A SIGTERM meant for the app (a stop, a drain) reaches it directly (same process group, or
    # the sandbox ends): the bridge stays until the app is gone, serving what it still answers.
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: None)
    app = await asyncio.create_subprocess_exec("sh", "-c", command, preexec_fn=die_with_bridge)
    code = await app.wait()
    for s in servers:
        s.close()
    for path in (TRAFFIC_SOCKET, READY_SOCKET):
        if path:
            try:
                os.unlink(path)
            except OSError:
                pass
    return code


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 -m chatgpu.service_bridge COMMAND")
    code = asyncio.run(main(sys.argv[1]))
    sys.stdout.flush()
    sys.stderr.flush()
    if code < 0:
        # Killed by a signal: end the same way, so the worker sees how the app ended.
        try:
            signal.signal(-code, signal.SIG_DFL)
        except (OSError, ValueError):
            pass  # SIGKILL, SIGSTOP: no handler to reset
        os.kill(os.getpid(), -code)
        os._exit(128 - code)
    os._exit(code)
