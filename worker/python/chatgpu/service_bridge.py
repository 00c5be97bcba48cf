"""The way into a hosted service's sandbox (started by the worker beside the service's command).

The sandbox has no network but its own loopback: the app listens on 127.0.0.1:$PORT there,
which the worker outside cannot reach. This bridge listens on a Unix socket in the attempt
directory ($CHATGPU_SERVICE_SOCKET, a file the worker can open) and pipes each connection to
127.0.0.1:$PORT. Nothing else goes in or out: the service's network is that one port.
"""
import asyncio
import os

SOCKET = os.environ["CHATGPU_SERVICE_SOCKET"]
PORT = int(os.environ["PORT"])


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


async def handle(client_reader, client_writer):
    try:
        app_reader, app_writer = await asyncio.open_connection("127.0.0.1", PORT)
    except OSError:
        client_writer.close()
        return
    try:
        await asyncio.gather(pipe(client_reader, app_writer), pipe(app_reader, client_writer))
    finally:
        app_writer.close()
        client_writer.close()


async def main():
    try:
        os.unlink(SOCKET)
    except FileNotFoundError:
        pass
    server = await asyncio.start_unix_server(handle, path=SOCKET)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
