from etrt_fixtures import etrt_wheel, exported_program, tool_runner  # noqa: F401
