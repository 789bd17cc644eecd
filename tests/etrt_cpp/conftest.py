from etrt_fixtures import (  # noqa: F401
    etrt_wheel,
    exported_program,
    soak_programs,
    tool_runner,
)
