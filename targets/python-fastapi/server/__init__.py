"""corobench reference target: FastAPI on uvicorn (uvloop + httptools), one event loop per process."""
